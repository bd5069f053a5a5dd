// Package controller owns governed invocation (ADR-0087 D1, D3–D7): the
// tool registry with its no-bypass token, the InvocationController that
// pins a policy snapshot, records evidence, runs the gates in their phases
// and levels, consults approvals and exception grants, calls the tool once
// and records its outcome, task boundaries, and the observation projector.
//
// One governed call has two phases: Authorize (everything before the
// callable; returns a one-use Permit) and Complete (the outcome record).
// Invoke is their in-process composition; a remote agent (through
// govhost serve) runs its callable between the two. A server answers
// Authorize in the request's goroutine with Task.AuthorizeUntilApproval,
// which stops where a gate asks for an approval: the AwaitingApproval it
// returns is finished in a goroutine of its own, so that only a call that
// waits for an approver outlives its request.
//
// A task carries what every call in it shares: its workspace root
// (TaskOptions.Workspace, passed to gates as abi.GateInput.Workspace) and
// its execution context (run and agent ids, metadata, merged into each
// call). DryRun evaluates a call against a snapshot's gates without a
// task, evidence or the tool, as `govhost eval` does.
//
// It sees gates only through the Gate and GateProvider interfaces (the Wasm
// host implements them), so it is testable with Go fakes. The token makes
// an accidental internal bypass detectable; it is a library boundary, not a
// sandbox: Go code holding a tool's function can always call it directly.
package controller
