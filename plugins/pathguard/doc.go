// Package pathguard is the pure-Go logic of govhost's built-in path gate. It
// decides on the host's path facts (abi.PathFact in GateInput.Paths, with
// GateInput.Cwd, Tool and Operation) and never touches a filesystem.
//
// It is no longer what govhost runs: the embedded module is the Rust port
// plugins/rust/pathguard.rs. This package is the reference that port is
// held to (plugins/builtin's FuzzDifferential_Pathguard), and the host's
// ResolveConfig, until both move (docs/gates-builtin.md); then it retires,
// keeping README.md and testdata.
//
// One configuration schema, discriminated by "kind", covers the families it
// replaces:
//
//   - "guard_paths": LionAGI's guard_paths(allowed_paths, denied_paths), with
//     the hard floors of its path_safety module (symlink and protected-name
//     refusal);
//   - "workspace": AgentLane's WorkspaceToolPermissionPolicy(root,
//     allowed_operations);
//   - "path_scope": AgentLane's PathScopeToolPermissionPolicy(paths,
//     allowed_operations);
//   - "virtual": a policy for a mounted storage namespace (AgentLane's
//     normalize_virtual_path and mount router), decided on the logical
//     path arguments alone.
//
// Roots, scopes and absolute denied entries may name the task's workspace
// ("$workspace", abi.GateInput.Workspace); ResolveConfig is the host's
// step that realpaths the configured paths before the gate is built.
//
// Where the Python originals let a path escape (a dangling symlink, ".."
// after the nearest existing parent, an intermediate symlink) the facts are
// resolved more strictly by the host (package pathfacts) and this gate is
// stricter too; README.md lists every difference.
//
// New parses a configuration once; the returned *Gate is immutable and safe
// for concurrent use, and Evaluate never panics. The package imports nothing
// of govhost's but abi and compiles for GOOS=wasip1.
package pathguard
