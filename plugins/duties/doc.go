// Package duties is the built-in separation-of-duties gate (ADR-0087 D8):
// a hard gate that compares the operation's actor against a closed set of
// duties incompatible with the one the operation performs, using the duty
// history the host supplies from the task's committed evidence (which
// actor completed which tool: abi.OperationInfo.Assignments). A missing
// actor or a missing history denies. It claims nothing about who the actor
// really is: an actor reference is policy input, not authentication.
//
// The logic here is pure Go, tested natively; ./wasm is the thin Wasm
// module `make plugins` builds into plugins/builtin/duties.wasm.
package duties
