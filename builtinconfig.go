package govhost

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/govhost/govhost/pathfacts"
	"github.com/govhost/govhost/policy/policyfile"
)

// builtinConfigHooks are the host-side steps a built-in module's
// configuration takes before the module sees it, by the module's name
// (Gates.GateFor finds the name from the binding's module digest). A gate
// has no filesystem: what only the host can know goes into its
// configuration here.
var builtinConfigHooks = map[string]func(config []byte) ([]byte, error){
	"pathguard": func(config []byte) ([]byte, error) {
		out, _, err := resolvePathguardConfig(config, pathfacts.Canonical)
		return out, err
	},
}

// resolvePathguardConfig returns a pathguard configuration with its
// configured paths in their real form, the way LionAGI and AgentLane
// realpath their roots when a policy is built: every root (allowed_paths,
// root) and scope (paths) is replaced by resolve's answer after "~"
// expansion with the configured home, and every absolute denied_paths
// entry is kept and, when it resolves elsewhere, followed by its resolved
// form. "$workspace" paths are left alone (the controller resolves the
// task's workspace when the task opens) and so is the "virtual" kind (a
// storage namespace, not the host's paths). A root that is itself a symlink
// (/tmp on macOS, a home on another volume) then admits the paths beneath
// it.
//
// The module validates its configuration; this reads only the fields it
// resolves. A configuration it cannot read (not an object, an unknown kind,
// a path that is not absolute, a "~" without a home…) is one the module
// refuses: it is returned unchanged with readable false, so it is refused
// the way every guest refuses one (TestPathguardConfig_UnreadableIsRefused
// and FuzzPathguardConfig_HostStepAgreesWithTheModule hold the module to
// that). Errors are resolve's.
func resolvePathguardConfig(config []byte, resolve func(string) (string, error)) (out []byte, readable bool, err error) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(config, &fields) != nil || fields == nil {
		return config, false, nil
	}
	var kind, home string
	if !pgString(fields, "kind", &kind) || !pgString(fields, "home", &home) {
		return config, false, nil
	}
	if home != "" {
		if !strings.HasPrefix(home, "/") {
			return config, false, nil
		}
		home = path.Clean(home)
	}
	// real resolves one configured path; ok is false for one the module
	// refuses.
	real := func(field, p string) (out string, ok bool, err error) {
		p, isWorkspace, ok := pgAbsPath(p, home)
		if !ok || isWorkspace {
			return p, ok, nil
		}
		r, err := resolve(p)
		if err != nil {
			return "", false, fmt.Errorf("pathguard: config: %s: resolving %q: %w", field, p, err)
		}
		return r, true, nil
	}
	// realList resolves name's list into the field; ok is false for a list
	// the module refuses.
	realList := func(name string, required bool) (bool, error) {
		list, present, ok := pgStrings(fields, name)
		if !ok || (required && !present) {
			return false, nil
		}
		if len(list) == 0 {
			return true, nil
		}
		for i, s := range list {
			r, ok, err := real(fmt.Sprintf("%s[%d]", name, i), s)
			if !ok || err != nil {
				return false, err
			}
			list[i] = r
		}
		fields[name], _ = json.Marshal(list)
		return true, nil
	}
	var ok bool
	switch kind {
	case "workspace":
		var root string
		if !pgString(fields, "root", &root) || root == "" {
			return config, false, nil
		}
		if root, ok, err = real("root", root); ok && err == nil {
			fields["root"], _ = json.Marshal(root)
		}
	case "path_scope":
		ok, err = realList("paths", true)
	case "guard_paths":
		if ok, err = realList("allowed_paths", false); ok && err == nil {
			ok, err = resolveDenied(fields, home, real)
		}
	case "virtual":
		return config, true, nil
	default: // a kind the module refuses
		return config, false, nil
	}
	if !ok || err != nil {
		return config, false, err
	}
	out, err = json.Marshal(fields)
	return out, err == nil, err
}

// resolveDenied follows each absolute denied_paths entry (after "~"
// expansion; not a "$workspace" one) with its resolved form when that
// differs. Globs and plain texts are LionAGI's name and substring tests:
// they stay as they are.
func resolveDenied(fields map[string]json.RawMessage, home string, real func(field, p string) (string, bool, error)) (bool, error) {
	list, _, ok := pgStrings(fields, "denied_paths")
	if !ok || len(list) == 0 {
		return ok, nil
	}
	out := make([]string, 0, len(list))
	for i, s := range list {
		out = append(out, s)
		if strings.IndexByte(s, 0) >= 0 {
			return false, nil
		}
		expanded, ok := pgExpandHome(s, home)
		if !ok {
			return false, nil
		}
		isWorkspace := policyfile.IsWorkspaceRef(s)
		if !isWorkspace && !strings.HasPrefix(expanded, "/") {
			continue // a glob or a plain text
		}
		field := fmt.Sprintf("denied_paths[%d]", i)
		r, ok, err := real(field, s)
		if !ok || err != nil {
			return false, err
		}
		if !isWorkspace && r != path.Clean(expanded) {
			out = append(out, r)
		}
	}
	fields["denied_paths"], _ = json.Marshal(out)
	return true, nil
}

// workspaceRef, as a configured path (alone or followed by "/sub/path"),
// names the task's workspace root.
const workspaceRef = "$workspace"

// pgAbsPath is a configured absolute path as the module reads it: a
// "$workspace" path cleaned and kept (isWorkspace), else "~" expanded with
// home and cleaned. ok is false for one the module refuses (a NUL, a ".."
// in a "$workspace" path, a "~" it cannot expand, a relative path).
func pgAbsPath(s, home string) (p string, isWorkspace, ok bool) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", false, false
	}
	if rest, found := strings.CutPrefix(s, workspaceRef); found && (rest == "" || rest[0] == '/') {
		for _, comp := range strings.Split(rest, "/") {
			if comp == ".." {
				return "", true, false
			}
		}
		return strings.TrimSuffix(workspaceRef+path.Clean("/"+rest), "/"), true, true
	}
	expanded, ok := pgExpandHome(s, home)
	if !ok || !strings.HasPrefix(expanded, "/") {
		return "", false, false
	}
	return path.Clean(expanded), false, true
}

// pgExpandHome expands a leading "~" or "~/" with home ("" = none); ok is
// false for a "~" path it cannot expand (no home, or "~name").
func pgExpandHome(s, home string) (string, bool) {
	if !strings.HasPrefix(s, "~") {
		return s, true
	}
	if home == "" || (len(s) > 1 && s[1] != '/') {
		return "", false
	}
	out := strings.TrimRight(home, "/") + s[1:]
	if out == "" {
		out = "/"
	}
	return out, true
}

// pgString reads an optional string field into dst (absent and null leave
// it alone); ok is false for another type.
func pgString(fields map[string]json.RawMessage, name string, dst *string) bool {
	raw, present := fields[name]
	if !present || string(raw) == "null" {
		return true
	}
	return json.Unmarshal(raw, dst) == nil
}

// pgStrings reads an optional list of strings; present is false for an
// absent or null field, ok false for anything but a list of strings.
func pgStrings(fields map[string]json.RawMessage, name string) (list []string, present, ok bool) {
	raw, found := fields[name]
	if !found || string(raw) == "null" {
		return nil, false, true
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, false, false
	}
	list = make([]string, len(items))
	for i, it := range items {
		if string(it) == "null" || json.Unmarshal(it, &list[i]) != nil {
			return nil, false, false
		}
	}
	return list, true, true
}
