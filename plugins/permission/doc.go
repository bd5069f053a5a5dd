// Package permission is the logic of govhost's built-in permission gate: tool
// permission policies with the exact semantics of LionAGI's PermissionPolicy
// (ADR-0086 D1: modes, presets, fnmatch rules in deny → allow → escalate
// tiers, the bash shell-control check) and of AgentLane's grant and
// side-effect approval policies (the grant grammar, ToolPermissionGrantPolicy,
// SideEffectApprovalToolPermissionPolicy, the model-facing result texts).
//
// New decodes a JSON configuration once; Gate.Evaluate answers one
// abi.GateInput with an abi.GateOutput.
//
// It is no longer what govhost runs: the embedded module is the Rust port
// plugins/rust/permission.rs. This package is the reference that port is
// held to (plugins/builtin's FuzzDifferential_Permission) until the last
// tests that use it as in-process gate logic move to the module
// (docs/gates-builtin.md); then it retires, keeping README.md and testdata.
//
// It does not own path containment (plugins/pathguard), destructive-command
// detection (plugins/destructive), approval handling (the host's approval
// broker answers require_approval) or the Wasm entry point.
//
// # Why hand-written fnmatch, JSON and Python text?
//
// LionAGI matches with Python's fnmatch, whose bracket rules come from
// fnmatch.translate and the re module; Go's path.Match differs on '*' and '/',
// "[^…]", backslashes and unclosed brackets; the matcher is shared with
// plugins/pathguard (plugins/internal/fnmatch), the lower-case fallback is
// here (rule.go). Its rule maps need object keys in order (a later key that
// canonicalises alike replaces an earlier one), and its match strings are
// built with Python's str() and compared after str.lower(). Each is
// reproduced and checked against CPython's answers stored in testdata.
package permission
