package pathguard

import (
	"path"
	"strings"

	"github.com/govhost/govhost/abi"
)

// evalGuardPaths is LionAGI's guard_paths hook (hooks.py) with the hard
// floors of path_safety.resolve_workspace_path, evaluated on host facts.
//
// LionAGI reads args.get("path") or args.get("file_path"): only one of them.
// pathguard checks both when both are present (path first), so a bogus
// "path" cannot hide the "file_path" an editor tool really uses.
func (g *Gate) evalGuardPaths(in abi.GateInput) abi.GateOutput {
	var checked []*abi.PathFact
	if g.cfg.everyPath {
		for k := range in.Paths {
			if f := &in.Paths[k]; f.Raw != "" || f.Resolved != "" {
				checked = append(checked, f)
			}
		}
	}
	for _, arg := range [...]string{"path", "file_path"} {
		if g.cfg.everyPath {
			break
		}
		for k := range in.Paths {
			if f := &in.Paths[k]; f.Arg == arg && (f.Raw != "" || f.Resolved != "") {
				checked = append(checked, f)
				break
			}
		}
	}
	if len(checked) == 0 {
		return allow(ReasonNoPath, "")
	}
	rule := ""
	for _, f := range checked {
		out, matched := g.checkGuardPath(&in, f)
		if out.Decision != abi.DecisionAllow {
			return out
		}
		if rule == "" {
			rule = matched
		}
	}
	return allow(ReasonAllowed, rule)
}

// view is one way of looking at the requested path: resolved is what the
// rules test; lexical, when known, is the same path joined and cleaned
// without following symlinks.
type view struct {
	resolved string
	lexical  string
	real     bool // resolved comes from the host's fact
}

// checkGuardPath decides one path fact. On allow it returns the root that
// admitted the path, if any.
func (g *Gate) checkGuardPath(in *abi.GateInput, f *abi.PathFact) (abi.GateOutput, string) {
	c := g.cfg
	deny := func(code, detail, rule string) (abi.GateOutput, string) {
		return abi.GateOutput{
			Decision:    abi.DecisionDeny,
			ReasonCode:  code,
			Detail:      detail,
			Message:     deniedMessage(in.Tool, f.Resolved, in),
			MatchedRule: rule,
		}, ""
	}
	if !validFact(f) {
		return deny(ReasonInvalidFact, "path fact for "+f.Arg+" is not an absolute clean path: "+pyRepr(f.Resolved), "")
	}
	raw := f.Raw
	if raw == "" {
		raw = f.Resolved // a fact without its raw text: judge the resolved path
	}
	expanded, ok := expandHome(raw, c.home)
	if !ok {
		return deny(ReasonUnverifiable, "cannot verify "+pyRepr(raw)+": the gate expands \"~\" only with a configured home", "")
	}

	// LionAGI joins a relative path to the first allowed root, never to cwd;
	// the host resolved it against cwd. When the two differ, both are
	// checked: the host's (what the tool opens, symlinks known) and
	// LionAGI's own candidate (lexically, symlinks unknown).
	cwd := ""
	if in.Cwd != "" {
		cwd = path.Clean(in.Cwd)
	}
	var views [2]view
	n := 1
	switch {
	case strings.HasPrefix(expanded, "/"):
		views[0] = view{resolved: f.Resolved, lexical: path.Clean(expanded), real: true}
	case len(c.roots) > 0 && (cwd == "" || cwd == c.roots[0]):
		views[0] = view{resolved: f.Resolved, lexical: joinClean(c.roots[0], expanded, f.Resolved), real: true}
	case len(c.roots) > 0:
		if !strings.HasPrefix(cwd, "/") {
			return deny(ReasonUnverifiable, "cannot verify "+pyRepr(raw)+": cwd is not absolute", "")
		}
		views[0] = view{resolved: f.Resolved, lexical: joinClean(cwd, expanded, f.Resolved), real: true}
		lion := path.Join(c.roots[0], expanded)
		views[1] = view{resolved: lion, lexical: lion}
		n = 2
	default:
		if !strings.HasPrefix(cwd, "/") {
			return deny(ReasonUnverifiable, "cannot verify relative path "+pyRepr(raw)+" without an absolute cwd", "")
		}
		views[0] = view{resolved: f.Resolved, lexical: joinClean(cwd, expanded, f.Resolved), real: true}
	}

	matchedRoot := ""
	for _, v := range views[:n] {
		// The decision is on the resolved path: a symlink whose target
		// stays inside a root is inside, one that leads out is outside.
		// refuse_symlinks is LionAGI's path_safety floor: the path asked
		// for must not be a symlink itself (its last component; the host's
		// fact, an lstat). Intermediate symlinks and a symlinked root are
		// allowed, as there.
		if c.refuseSymlinks && v.real && f.Link {
			cand := pathlibStr(expanded)
			if !strings.HasPrefix(expanded, "/") && len(c.roots) > 0 {
				cand = pathlibStr(c.roots[0] + "/" + expanded)
			}
			return deny(ReasonSymlink, "Refusing to access symlink: "+pyRepr(cand), "")
		}
		if len(c.roots) > 0 {
			root := ""
			for _, r := range c.roots {
				if within(v.resolved, r) {
					root = r
					break
				}
			}
			if root == "" {
				return deny(ReasonOutsideRoot, "Path not in allowed list: "+raw, "")
			}
			if matchedRoot == "" {
				matchedRoot = root
			}
		}
		name := path.Base(v.resolved)
		if v.resolved == "/" {
			name = ""
		}
		if isProtectedName(name) {
			return deny(ReasonProtected, "Refusing to access protected path: "+pyRepr(name), "")
		}
		// The name asked for counts too: a link called ".env" is refused
		// whatever it points to (LionAGI refuses every final symlink).
		if asked := path.Base(v.lexical); v.lexical != v.resolved && v.lexical != "/" && isProtectedName(asked) {
			return deny(ReasonProtected, "Refusing to access protected path: "+pyRepr(asked), "")
		}
		for k := range c.denied {
			d := &c.denied[k]
			if d.matches(v, raw, name) {
				return deny(ReasonDenied, "Path matches deny rule: "+raw, d.text)
			}
		}
	}
	return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: ReasonAllowed}, matchedRoot
}

// matches applies one denied_paths rule as LionAGI does.
func (d *deniedRule) matches(v view, raw, name string) bool {
	switch d.kind {
	case deniedAbsolute:
		// The path itself or anything beneath it. The lexical form is
		// tested too, in case the configured entry is not a real path.
		return within(v.resolved, d.abs) || within(v.lexical, d.abs)
	case deniedGlob:
		// fnmatch against every component of the resolved path,
		// including the leading "/" (pathlib's parts).
		if d.glob.Match("/") {
			return true
		}
		for rest := v.resolved[1:]; rest != ""; {
			var part string
			part, rest, _ = strings.Cut(rest, "/")
			if d.glob.Match(part) {
				return true
			}
		}
		return false
	default:
		// Substring of the raw argument or of the resolved basename.
		return strings.Contains(raw, d.text) || strings.Contains(name, d.text)
	}
}

// joinClean is path.Join(base, rel) for a clean absolute base, without
// allocating when the result equals hint (the usual case: no symlink).
func joinClean(base, rel, hint string) string {
	if simpleRel(rel) {
		n := len(base)
		if base == "/" {
			n = 0
		}
		if len(hint) == n+1+len(rel) && hint[:n] == base[:n] && hint[n] == '/' && hint[n+1:] == rel {
			return hint
		}
	}
	return path.Join(base, rel)
}

// simpleRel reports a relative path that path.Clean leaves unchanged and
// that has no "." or ".." component.
func simpleRel(rel string) bool {
	if rel == "" || rel[0] == '/' || rel[len(rel)-1] == '/' {
		return false
	}
	for rest := rel; rest != ""; {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}
