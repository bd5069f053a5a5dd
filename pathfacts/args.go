package pathfacts

import (
	"github.com/govhost/govhost/abi"
)

// DefaultArgNames returns the argument names that carry paths, in priority
// order:
//
//   - "path": LionAGI's reader and search tools, and every AgentLane
//     filesystem tool (read, find, grep, write, patch — research §9);
//   - "file_path": LionAGI's editor tool.
//
// AgentLane's bash tool sends "command" and no path; its write tool derives
// the parent directory from "path" (pathguard infers that request itself).
// A caller whose tools use other names passes them to ResolveArgs.
// The returned slice is a fresh copy.
func DefaultArgNames() []string { return []string{"path", "file_path"} }

// ResolveCall resolves a call's working directory (ResolveCwd) and its
// DefaultArgNames arguments in one step. Put resolvedCwd in GateInput.Cwd
// and facts in GateInput.Paths: pathguard compares the lexical join of
// GateInput.Cwd and a relative argument with its resolved form, so an
// unresolved cwd that goes through a symlink would read as a symlinked path.
func ResolveCall(cwd string, args map[string]any, order []string) (resolvedCwd string, facts []abi.PathFact, err error) {
	resolvedCwd, err = ResolveCwd(cwd)
	if err != nil {
		return "", nil, err
	}
	facts, err = ResolveArgs(resolvedCwd, args, order, DefaultArgNames())
	if err != nil {
		return "", nil, err
	}
	return resolvedCwd, facts, nil
}

// Resolve resolves the DefaultArgNames arguments of one call. See ResolveArgs.
func Resolve(cwd string, args map[string]any, order []string) ([]abi.PathFact, error) {
	return ResolveArgs(cwd, args, order, DefaultArgNames())
}

// ResolveArgs returns one fact per path-carrying argument of args: those whose
// name is in names and whose value is a non-empty string. Facts come in the
// order of order (the caller's argument order); a path argument missing from
// order follows, in the order of names.
//
// A null value and the empty string count as absent (both originals treat
// them as "no path"). Any other non-string value is an *ArgError wrapping
// ErrNotString: the call must fail closed.
//
// cwd must be absolute and should already be resolved (ResolveCwd); a
// relative raw path is joined to it. An empty cwd means the process working
// directory. ResolveArgs only reads the filesystem (lstat, readlink).
func ResolveArgs(cwd string, args map[string]any, order []string, names []string) ([]abi.PathFact, error) {
	if len(args) == 0 || len(names) == 0 {
		return nil, nil
	}
	var (
		facts []abi.PathFact
		done  = make(map[string]bool, len(names))
		base  string
	)
	add := func(name string) error {
		if done[name] || !contains(names, name) {
			return nil
		}
		done[name] = true
		v, ok := args[name]
		if !ok || v == nil {
			return nil
		}
		s, ok := v.(string)
		if !ok {
			return &ArgError{Arg: name, Path: "", Err: ErrNotString}
		}
		if s == "" {
			return nil
		}
		if base == "" {
			b, err := ResolveCwd(cwd)
			if err != nil {
				return err
			}
			base = b
		}
		f, err := resolveFrom(base, s)
		if err != nil {
			return &ArgError{Arg: name, Path: s, Err: err}
		}
		f.Arg = name
		facts = append(facts, f)
		return nil
	}
	for _, name := range order {
		if err := add(name); err != nil {
			return nil, err
		}
	}
	for _, name := range names {
		if err := add(name); err != nil {
			return nil, err
		}
	}
	return facts, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
