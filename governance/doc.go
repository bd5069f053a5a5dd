// Package governance is govhost's shared vocabulary (ADR-0087 D2–D6, D8): the
// frozen evidence record and its sha256-v1 chain hash, the closed evidence
// taxonomy, gate results and levels, operation contexts, policy snapshot
// models, certificates, exception grants, typed errors, and the canonical
// JSON encoding every digest is computed over.
//
// It is also the host side's one JSON toolkit: one scanner and the strict
// reader on it (ReadStrictJSON with a Shape, CheckStrictJSON), one value
// reader (ParseJSON, ParseObject), one ordered-object reader
// (ObjectMembers), one escaper (Python's form, for canonical text) and one
// canonical checker (CheckCanonical). The gate wire's codec is abi's: it
// compiles for guests too.
//
// It imports nothing of govhost's, so every other package can depend on it.
// It does not store, verify chains, run gates or decide anything: those live
// in evidence, policy, host and controller.
//
// "Frozen" in Go: constructors validate, values are passed and stored by
// value, and the few types that hold slices or maps keep them unexported and
// copy them in and out.
package governance
