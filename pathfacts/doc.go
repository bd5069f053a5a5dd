// Package pathfacts resolves the path arguments of a tool call on the host's
// real filesystem, before any gate runs, and describes each one as an
// abi.PathFact. Gates have no filesystem: pathguard decides on these facts.
//
// It owns argument selection (which argument names carry paths), home
// expansion, joining relative paths to the working directory, and a
// component-by-component symlink resolution with the semantics of Python's
// os.path.realpath(strict=False), which both LionAGI and AgentLane use:
//
//   - every symlink on the way is followed, intermediate or final, including
//     a dangling one (its target text is followed even though nothing exists
//     there, so a later create lands where Resolved says);
//   - ".." is applied to the path resolved so far, also after a missing
//     component, so "missing/../../x" is collapsed rather than left for a
//     lexical comparison to misjudge;
//   - a missing component and everything after it is kept as written.
//
// This is stricter than AgentLane's own request resolution (nearest existing
// parent, realpath'd, plus the unresolved remainder), which lets a dangling
// symlink or a ".." after the nearest existing parent escape a workspace.
//
// NearestExisting is the deepest ancestor of Resolved that exists and is a
// directory (Resolved itself when it exists). A regular file is never
// counted as an ancestor, because nothing can exist beneath it; this is what
// lets a gate tell an existing directory scope from an existing file scope.
//
// Host sequence:
//
//	cwd, facts, err := pathfacts.ResolveCall(req.Cwd, args, order, nil)
//	if err != nil { /* fail closed: the call does not run */ }
//	in.Cwd, in.Paths = cwd, facts
//
// GateInput.Cwd must be the resolved cwd: pathguard compares the lexical
// join of cwd and the raw argument with Resolved to detect symlinks.
//
// The facts are taken at one instant. This is a framework boundary, not a
// TOCTOU-safe sandbox: a file swapped for a symlink after resolution is out
// of scope, as it is in both originals. Paths are POSIX paths; the package
// does not support Windows drive or UNC paths.
//
// The package is host side only (it uses os); it imports nothing of
// govhost's but abi.
package pathfacts
