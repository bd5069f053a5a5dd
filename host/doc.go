// Package host runs govhost gates: WebAssembly modules of the native gate
// ABI v1 (abi/README.md) on wazero, and Extism-ABI modules through Extism's Go
// SDK, behind one interface.
//
// A Host compiles each module once (with an optional on-disk compilation
// cache for restarts), pins it to its sha256 digest, and keeps for every
// (module digest, configuration digest) a Gate with a bounded pool of
// instances, each configured once through gate_configure. Every guest runs
// with no filesystem, network, environment, arguments or real clock; its
// memory is capped and every call has a deadline that stops even a tight
// loop.
//
// Containment: any failure of a guest (trap, deadline, memory cap, missing
// export, wrong ABI version, malformed or oversized output, a decision
// outside the closed set) becomes a deny with a stable reason code and a
// *GuestError; no text produced by the guest is kept. The failed instance is
// discarded and the host keeps serving.
//
// Why rewrite modules at load? A call must be stoppable, and wazero's
// WithCloseOnContextDone leaves native code at every loop iteration to check
// in Go, which made Go-built guests about 10 times slower a call. Native
// modules are instead instrumented once (host/internal/interrupt): each loop
// header counts down a budget and, every 1024 iterations, visits Go (a
// preemption point, so a spinning guest cannot stall the garbage collector)
// and reads a flag the host raises from a timer or the caller's context.
// Modules that cannot be instrumented, and Extism modules, fall back to
// WithCloseOnContextDone.
//
// Why a memory allocator rather than RuntimeConfig.WithMemoryLimitPages?
// Both refuse growth past the cap, but only the allocator
// (host/internal/memcap) sees the refusal, so a memory bomb is reported as
// gate.memory_limit rather than as a generic trap.
//
// The host owns no policy: it does not know bindings, levels or evidence.
// The controller sees a Gate through its own interface,
// Evaluate(ctx, abi.GateInput) (abi.GateOutput, error).
package host
