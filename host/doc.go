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
// in Go, which made Go-built guests about 10 times slower a call, and it
// never stops a guest that recurses without looping. Every module, native
// and Extism, is instead rewritten once (host/internal/interrupt, one pass
// linear in the module's size): each function entry and loop header counts
// down a budget and, every 1024 counts, visits Go (a preemption point, so a
// spinning guest cannot stall the garbage collector) and reads a flag the
// host raises from a timer or the caller's context; each function entry
// also counts the call depth (WithMaxCallDepth, gate.stack_limit); each
// table.grow is bounded by the memory cap (tables count 8 bytes an entry);
// the start function runs as an ordinary call under the deadline instead of
// inside instantiation; and exporting a name the host reserves
// (__govhost_...) is refused (gate.reserved_name). A module the pass cannot
// rewrite is refused (gate.invalid_module): nothing runs uninstrumented.
// Extism modules also keep WithCloseOnContextDone (Extism's SDK runs them).
//
// Load is bounded too: structural limits checked in the same pass before
// compiling (WithModuleLimits: functions, locals, nesting, br_table size,
// body size, each with its own code) and a time bound (WithLoadTimeout,
// gate.load_timeout). wazero cannot cancel a compilation: past the bound it
// finishes in the background and Close waits for it. LoadTrusted, for the
// modules embedded in the binary, has no time bound.
//
// The rules that decide a call: a call that outlives its deadline is
// gate.timeout (or gate.canceled) whatever it answered; a call during which
// memory or table growth was refused is gate.memory_limit whatever it
// answered.
//
// Why a memory allocator rather than RuntimeConfig.WithMemoryLimitPages?
// Both refuse growth past the cap, but only the allocator
// (host/internal/memcap) sees the refusal, so a memory bomb is reported as
// gate.memory_limit rather than as a generic trap.
//
// Isolation between callers (Isolation, GateWith): under IsolationChain (the
// default) an instance serves one task chain at a time and is reset to its
// post-setup state (memory and globals snapshot, or a fresh instance)
// before it serves another (a chain is handed back the instance it dirtied
// last, or a clean or new one while the pool has room, so that chains taking
// turns do not pay a reset each turn); IsolationCall resets before every
// call; IsolationShared never resets, keeps no snapshot, and is NOT isolated
// (for trusted embedded modules only). Gates of different GateOptions.Binding never share
// instances. The controller names the chain through EvaluateChain.
//
// The host owns no policy: it does not know bindings, levels or evidence.
// The controller sees a Gate through its own interface,
// Evaluate(ctx, abi.GateInput) (abi.GateOutput, error).
package host
