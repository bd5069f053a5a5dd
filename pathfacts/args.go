package pathfacts

import (
	"strconv"
	"strings"

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

// ArraySuffix marks a path-carrying argument whose value is a JSON array of
// paths ("paths[]"): each element is one fact, its Arg "paths[0]", ... An
// MCP filesystem server's read_multiple_files takes such an argument.
const ArraySuffix = "[]"

// ResolveCall resolves a call's working directory (ResolveCwd) and its path
// arguments in one step: names (see ResolveArgs), or DefaultArgNames when
// names is nil. Put resolvedCwd in GateInput.Cwd and facts in
// GateInput.Paths: pathguard compares the lexical join of GateInput.Cwd and
// a relative argument with its resolved form, so an unresolved cwd that goes
// through a symlink would read as a symlinked path.
func ResolveCall(cwd string, args map[string]any, order []string, names []string) (resolvedCwd string, facts []abi.PathFact, err error) {
	resolvedCwd, err = ResolveCwd(cwd)
	if err != nil {
		return "", nil, err
	}
	if names == nil {
		names = DefaultArgNames()
	}
	facts, err = resolveArgsFrom(resolvedCwd, args, order, names)
	if err != nil {
		return "", nil, err
	}
	return resolvedCwd, facts, nil
}

// Resolve resolves the DefaultArgNames arguments of one call. See ResolveArgs.
func Resolve(cwd string, args map[string]any, order []string) ([]abi.PathFact, error) {
	return ResolveArgs(cwd, args, order, DefaultArgNames())
}

// ResolveArgs returns one fact per path-carrying argument of args: those
// named in names whose value is a non-empty string, and, for a name with
// ArraySuffix, each non-empty string of the argument's array. Facts come in
// the order of order (the caller's argument order); a path argument missing
// from order follows, in the order of names.
//
// A null value and the empty string count as absent (both originals treat
// them as "no path"). Any other non-string value (or, for an array name, a
// value that is not an array of strings) is an *ArgError wrapping
// ErrNotString: the call must fail closed.
//
// cwd must be absolute and should already be resolved (ResolveCwd); a
// relative raw path is joined to it. An empty cwd means the process working
// directory. ResolveArgs only reads the filesystem (lstat, readlink).
func ResolveArgs(cwd string, args map[string]any, order []string, names []string) ([]abi.PathFact, error) {
	if len(args) == 0 || len(names) == 0 {
		return nil, nil
	}
	var base string
	return resolveArgs(func() (string, error) {
		if base == "" {
			b, err := ResolveCwd(cwd)
			if err != nil {
				return "", err
			}
			base = b
		}
		return base, nil
	}, args, order, names)
}

// resolveArgsFrom is ResolveArgs with a cwd ResolveCwd has already
// resolved (ResolveCall's): it is not walked a second time.
func resolveArgsFrom(resolvedCwd string, args map[string]any, order []string, names []string) ([]abi.PathFact, error) {
	if len(args) == 0 || len(names) == 0 {
		return nil, nil
	}
	return resolveArgs(func() (string, error) { return resolvedCwd, nil }, args, order, names)
}

// resolveArgs is ResolveArgs's selection; baseOf returns the resolved cwd,
// asked for only when a path argument is there to resolve.
func resolveArgs(baseOf func() (string, error), args map[string]any, order []string, names []string) ([]abi.PathFact, error) {
	isArray := make(map[string]bool, len(names))
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, ArraySuffix); ok {
			isArray[base] = true
		} else if _, seen := isArray[n]; !seen {
			isArray[n] = false
		}
	}
	var (
		facts []abi.PathFact
		done  = make(map[string]bool, len(names))
	)
	one := func(arg string, v any) error {
		s, ok := v.(string)
		if !ok {
			return &ArgError{Arg: arg, Path: "", Err: ErrNotString}
		}
		if s == "" {
			return nil
		}
		base, err := baseOf()
		if err != nil {
			return err
		}
		f, err := resolveFrom(base, s)
		if err != nil {
			return &ArgError{Arg: arg, Path: s, Err: err}
		}
		f.Arg = arg
		facts = append(facts, f)
		return nil
	}
	add := func(name string) error {
		array, named := isArray[name]
		if done[name] || !named {
			return nil
		}
		done[name] = true
		v, ok := args[name]
		if !ok || v == nil {
			return nil
		}
		if !array {
			return one(name, v)
		}
		list, ok := v.([]any)
		if !ok {
			return &ArgError{Arg: name, Path: "", Err: ErrNotString}
		}
		for i, e := range list {
			if e == nil {
				continue
			}
			if err := one(name+"["+strconv.Itoa(i)+"]", e); err != nil {
				return err
			}
		}
		return nil
	}
	for _, name := range order {
		if err := add(name); err != nil {
			return nil, err
		}
	}
	for _, name := range names {
		if err := add(strings.TrimSuffix(name, ArraySuffix)); err != nil {
			return nil, err
		}
	}
	return facts, nil
}
