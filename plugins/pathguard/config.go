package pathguard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/govhost/govhost/plugins/internal/fnmatch"
)

// Configuration kinds (the "kind" discriminator).
const (
	KindGuardPaths = "guard_paths"
	KindWorkspace  = "workspace"
	KindPathScope  = "path_scope"
	KindVirtual    = "virtual"
)

// Sentinel errors, wrapped in a *ConfigError that names the field.
var (
	// ErrConfig is matched (errors.Is) by every configuration error.
	ErrConfig = errors.New("pathguard: invalid config")
	// ErrUnknownKind: "kind" is missing or not one of the three kinds.
	ErrUnknownKind = errors.New("unknown kind")
	// ErrUnknownField: a field the kind does not take (typos never silently
	// weaken a policy).
	ErrUnknownField = errors.New("unknown field")
	// ErrMissingField: a required field is absent or null.
	ErrMissingField = errors.New("required field is missing")
	// ErrType: a field has the wrong JSON type.
	ErrType = errors.New("wrong type")
	// ErrNotAbsolute: a root, scope or absolute path is not absolute. The
	// gate cannot resolve relative paths or symlinks: give real absolute
	// paths (pathfacts.Canonical computes them).
	ErrNotAbsolute = errors.New("must be an absolute path")
	// ErrHome: a path starts with "~" but no "home" is configured, or it
	// names another user ("~name"), which the gate cannot look up.
	ErrHome = errors.New(`cannot expand "~" (configure "home", or give the absolute path)`)
	// ErrNUL: a path contains a NUL byte.
	ErrNUL = errors.New("contains a NUL byte")
	// ErrWorkspaceEscape: a "$workspace/…" path with a ".." component; it
	// must name the workspace root or a path beneath it.
	ErrWorkspaceEscape = errors.New(`a "$workspace" path must stay inside the workspace (no ".." components)`)
	// ErrUnknownOperation: an allowed_operations entry is not one of
	// AgentLane's eight operation names.
	ErrUnknownOperation = errors.New("unknown operation")
)

// ConfigError names the refused field, as a JSON path ("allowed_paths[2]").
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("pathguard: config: %v", e.Err)
	}
	return fmt.Sprintf("pathguard: config: %s: %v", e.Field, e.Err)
}

func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

func cfgErr(field string, err error) error { return &ConfigError{Field: field, Err: err} }

// fieldsByKind lists the fields each kind takes, besides "kind" and "home".
var fieldsByKind = map[string][]string{
	KindGuardPaths: {"allowed_paths", "denied_paths", "refuse_symlinks", "every_path_argument"},
	KindWorkspace:  {"root", "allowed_operations", "checked_operations"},
	KindPathScope:  {"paths", "allowed_operations", "checked_operations"},
	KindVirtual:    {"mounts", "roots", "cwd", "allowed_operations"},
}

// config is the parsed, validated configuration.
type config struct {
	kind string
	home string

	// guard_paths
	roots  []string // cleaned absolute roots, in order
	denied []deniedRule
	// refuseSymlinks refuses any symlink on the requested path (the
	// lexical path must be the resolved one), inside the roots too.
	refuseSymlinks bool
	// everyPath checks every path fact of the call, whatever its argument
	// name (an MCP tool's "source", "paths[]"…), not only path and
	// file_path.
	everyPath bool

	// workspace (roots[0]) and path_scope (scopes)
	scopes []string
	ops    opSet // nil: AgentLane's allowed_operations=None
	// checked, when set, limits the gate to these operations: any other
	// call (and a call whose operation is neither given nor inferable) is
	// allowed with ReasonNotChecked before any other check.
	checked opSet

	// virtual holds the "virtual" kind's namespace.
	virtual *virtualConfig

	// usesWorkspace: some root, scope or absolute denied path is a
	// "$workspace" path, substituted per call by withWorkspace.
	usesWorkspace bool
}

// WorkspaceRef, as a configured root, scope or absolute denied path (alone
// or followed by "/sub/path"), names the task's workspace root: the host's
// abi.GateInput.Workspace. One policy then serves every project on the
// machine. A call without a workspace is denied ReasonNoWorkspace.
const WorkspaceRef = "$workspace"

// withWorkspace returns the configuration with every "$workspace" path
// replaced by ws (a real, clean absolute path).
func (c *config) withWorkspace(ws string) *config {
	sub := func(p string) string {
		if rest, ok := strings.CutPrefix(p, WorkspaceRef); ok {
			return path.Join(ws, rest)
		}
		return p
	}
	out := *c
	out.usesWorkspace = false
	out.roots = make([]string, len(c.roots))
	for i, r := range c.roots {
		out.roots[i] = sub(r)
	}
	out.scopes = make([]string, len(c.scopes))
	for i, r := range c.scopes {
		out.scopes[i] = sub(r)
	}
	out.denied = make([]deniedRule, len(c.denied))
	for i, d := range c.denied {
		if d.kind == deniedAbsolute {
			d.abs = sub(d.abs)
		}
		out.denied[i] = d
	}
	return &out
}

// deniedRule is one denied_paths entry, classified as LionAGI does.
type deniedRule struct {
	text string // the entry as configured
	kind int    // deniedAbsolute, deniedGlob or deniedText
	abs  string // the cleaned absolute path (deniedAbsolute)
	glob *fnmatch.Pattern
}

const (
	deniedAbsolute = iota
	deniedGlob
	deniedText
)

func parseConfig(raw []byte) (*config, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, cfgErr("kind", ErrMissingField)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, cfgErr("", fmt.Errorf("%w: not a JSON object: %v", ErrType, err))
	}
	c := &config{}
	if err := decodeString(fields, "kind", &c.kind, true); err != nil {
		return nil, err
	}
	allowed, ok := fieldsByKind[c.kind]
	if !ok {
		return nil, cfgErr("kind", fmt.Errorf("%w %q (want %q, %q, %q or %q)", ErrUnknownKind, c.kind, KindGuardPaths, KindWorkspace, KindPathScope, KindVirtual))
	}
	for k := range fields {
		if k != "kind" && k != "home" && !containsString(allowed, k) {
			return nil, cfgErr(k, fmt.Errorf("%w for kind %q", ErrUnknownField, c.kind))
		}
	}
	if err := decodeString(fields, "home", &c.home, false); err != nil {
		return nil, err
	}
	if c.home != "" {
		if err := checkAbs("home", c.home); err != nil {
			return nil, err
		}
		c.home = path.Clean(c.home)
	}
	switch c.kind {
	case KindGuardPaths:
		return c, c.parseGuardPaths(fields)
	case KindVirtual:
		return c, c.parseVirtual(fields)
	case KindWorkspace:
		var root string
		if err := decodeString(fields, "root", &root, true); err != nil {
			return nil, err
		}
		p, err := c.absPath("root", root)
		if err != nil {
			return nil, err
		}
		c.scopes = []string{p}
		return c, c.parseOps(fields)
	default: // KindPathScope
		list, present, err := decodeStrings(fields, "paths")
		if err != nil {
			return nil, err
		}
		if !present {
			return nil, cfgErr("paths", ErrMissingField)
		}
		c.scopes = make([]string, 0, len(list))
		for i, s := range list {
			p, err := c.absPath(fmt.Sprintf("paths[%d]", i), s)
			if err != nil {
				return nil, err
			}
			c.scopes = append(c.scopes, p)
		}
		return c, c.parseOps(fields)
	}
}

func (c *config) parseGuardPaths(fields map[string]json.RawMessage) error {
	if raw, ok := fields["refuse_symlinks"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &c.refuseSymlinks); err != nil {
			return cfgErr("refuse_symlinks", fmt.Errorf("%w: want true or false", ErrType))
		}
	}
	if raw, ok := fields["every_path_argument"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &c.everyPath); err != nil {
			return cfgErr("every_path_argument", fmt.Errorf("%w: want true or false", ErrType))
		}
	}
	allowed, _, err := decodeStrings(fields, "allowed_paths")
	if err != nil {
		return err
	}
	for i, s := range allowed {
		p, err := c.absPath(fmt.Sprintf("allowed_paths[%d]", i), s)
		if err != nil {
			return err
		}
		c.roots = append(c.roots, p)
	}
	denied, _, err := decodeStrings(fields, "denied_paths")
	if err != nil {
		return err
	}
	for i, s := range denied {
		field := fmt.Sprintf("denied_paths[%d]", i)
		if strings.IndexByte(s, 0) >= 0 {
			return cfgErr(field, ErrNUL)
		}
		r := deniedRule{text: s}
		expanded, err := c.expandHome(field, s)
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(s, WorkspaceRef+"/") || s == WorkspaceRef:
			p, err := c.absPath(field, s)
			if err != nil {
				return err
			}
			r.kind, r.abs = deniedAbsolute, p
		case strings.HasPrefix(expanded, "/"):
			// LionAGI: Path(denied).expanduser().is_absolute(), then resolve.
			r.kind, r.abs = deniedAbsolute, path.Clean(expanded)
		case strings.ContainsAny(s, "*?["):
			r.kind, r.glob = deniedGlob, fnmatch.Compile(s)
		default:
			// Plain text, including "" (which LionAGI's substring test
			// matches in every path) and "~"/"{}" in the middle.
			r.kind = deniedText
		}
		c.denied = append(c.denied, r)
	}
	return nil
}

func (c *config) parseOps(fields map[string]json.RawMessage) error {
	checked, present, err := decodeStrings(fields, "checked_operations")
	if err != nil {
		return err
	}
	if present {
		c.checked = opSet{}
		for i, s := range checked {
			op, ok := parseOp(s)
			if !ok {
				return cfgErr(fmt.Sprintf("checked_operations[%d]", i), fmt.Errorf("%w %q", ErrUnknownOperation, s))
			}
			c.checked[op] = true
		}
	}
	list, present, err := decodeStrings(fields, "allowed_operations")
	if err != nil || !present {
		return err
	}
	c.ops = opSet{}
	for i, s := range list {
		op, ok := parseOp(s)
		if !ok {
			return cfgErr(fmt.Sprintf("allowed_operations[%d]", i), fmt.Errorf("%w %q", ErrUnknownOperation, s))
		}
		c.ops[op] = true
	}
	return nil
}

// absPath validates a configured absolute path (after "~" expansion) and
// cleans it lexically. A "$workspace" path is kept as written (cleaned) and
// replaced by the task's workspace root per call (withWorkspace); until
// then it is not absolute, so it can never match a resolved path.
func (c *config) absPath(field, s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", cfgErr(field, ErrNUL)
	}
	if rest, ok := strings.CutPrefix(s, WorkspaceRef); ok && (rest == "" || rest[0] == '/') {
		for _, comp := range strings.Split(rest, "/") {
			if comp == ".." {
				return "", cfgErr(field, fmt.Errorf("%w: %q", ErrWorkspaceEscape, s))
			}
		}
		c.usesWorkspace = true
		return strings.TrimSuffix(WorkspaceRef+path.Clean("/"+rest), "/"), nil
	}
	expanded, err := c.expandHome(field, s)
	if err != nil {
		return "", err
	}
	if err := checkAbs(field, expanded); err != nil {
		return "", err
	}
	return path.Clean(expanded), nil
}

// expandHome expands a leading "~" or "~/" with the configured home.
func (c *config) expandHome(field, s string) (string, error) {
	if !strings.HasPrefix(s, "~") {
		return s, nil
	}
	out, ok := expandHome(s, c.home)
	if !ok {
		return "", cfgErr(field, ErrHome)
	}
	return out, nil
}

// expandHome expands "~" and "~/..." with home ("" = unknown). It reports
// false for a "~" path it cannot expand: no home, or "~name".
func expandHome(s, home string) (string, bool) {
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

func checkAbs(field, s string) error {
	if !strings.HasPrefix(s, "/") {
		return cfgErr(field, fmt.Errorf("%w, got %q", ErrNotAbsolute, s))
	}
	return nil
}

func decodeString(fields map[string]json.RawMessage, name string, dst *string, required bool) error {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		if required {
			return cfgErr(name, ErrMissingField)
		}
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return cfgErr(name, fmt.Errorf("%w: want a string", ErrType))
	}
	if required && *dst == "" {
		return cfgErr(name, ErrMissingField)
	}
	return nil
}

// decodeStrings decodes a list of strings; present is false for an absent
// or null field.
func decodeStrings(fields map[string]json.RawMessage, name string) (list []string, present bool, err error) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil, false, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, false, cfgErr(name, fmt.Errorf("%w: want a list of strings", ErrType))
	}
	list = make([]string, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &list[i]); err != nil || string(it) == "null" {
			return nil, false, cfgErr(fmt.Sprintf("%s[%d]", name, i), fmt.Errorf("%w: want a string", ErrType))
		}
	}
	return list, true, nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
