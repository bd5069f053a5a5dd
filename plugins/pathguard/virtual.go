package pathguard

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/govhost/govhost/abi"
)

// The "virtual" kind governs tools whose paths name a storage namespace,
// not the host's filesystem: AgentLane's injected readers and writers over
// mounted storage send logical POSIX paths ("/tenant/sessions/s-1/notes.md")
// normalised by normalize_virtual_path, and the seed says to govern them
// with "a custom policy for the adapter's storage namespace". The gate
// reads the path arguments themselves (never the host's path facts, which
// would resolve them against the host) and touches no filesystem.

// ErrVirtualPath: a configured virtual path (cwd, a root) or mount name
// that normalize_virtual_path, or the mount rules, refuse.
var ErrVirtualPath = errors.New("invalid virtual path")

// errVirtual is a refusal of normalize_virtual_path, with its reason.
type errVirtual struct{ reason string }

func (e *errVirtual) Error() string { return e.reason }

// normalizeVirtualPath is AgentLane's normalize_virtual_path(path, cwd):
// purely lexical. Both texts are validated (even when path is absolute);
// cwd is collapsed from the root (a relative cwd is rooted); an absolute
// path starts from the root, a relative one from cwd; empty and "."
// components are skipped, ".." pops, and ".." at the root is an error,
// not clamped. The result is absolute, "/" for the root, without a
// trailing slash.
func normalizeVirtualPath(p, cwd string) (string, error) {
	if err := validateVirtual("path", p); err != nil {
		return "", err
	}
	if err := validateVirtual("cwd", cwd); err != nil {
		return "", err
	}
	base, err := collapseVirtual(nil, cwd)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(p, "/") {
		base = nil
	}
	parts, err := collapseVirtual(base, p)
	if err != nil {
		return "", err
	}
	return "/" + strings.Join(parts, "/"), nil
}

// validateVirtual refuses a blank text, NUL or backslash, a component with
// a Windows drive prefix (a letter then ':'), or one starting with '~'.
func validateVirtual(what, s string) error {
	if strings.TrimSpace(s) == "" {
		return &errVirtual{what + " must not be blank"}
	}
	if strings.ContainsAny(s, "\x00\\") {
		return &errVirtual{what + " must not contain NUL or a backslash"}
	}
	for rest := s; ; {
		comp, tail, more := strings.Cut(rest, "/")
		rest = tail
		if len(comp) >= 2 && comp[1] == ':' && (comp[0]|0x20 >= 'a' && comp[0]|0x20 <= 'z') {
			return &errVirtual{what + " must not contain a drive prefix: " + pyRepr(comp)}
		}
		if strings.HasPrefix(comp, "~") {
			return &errVirtual{what + " must not contain a '~' component: " + pyRepr(comp)}
		}
		if !more {
			return nil
		}
	}
}

func collapseVirtual(parts []string, s string) ([]string, error) {
	out := append(make([]string, 0, len(parts)+8), parts...)
	for rest, more := s, true; more; {
		var comp string
		comp, rest, more = strings.Cut(rest, "/")
		switch comp {
		case "", ".":
		case "..":
			if len(out) == 0 {
				return nil, &errVirtual{"path must stay within the virtual root: " + pyRepr(s)}
			}
			out = out[:len(out)-1]
		default:
			out = append(out, comp)
		}
	}
	return out, nil
}

// mount is one mounted storage namespace, at /<name>.
type mount struct {
	name     string
	readOnly bool
}

// virtualConfig is the "virtual" kind's configuration.
type virtualConfig struct {
	mounts []mount
	roots  []string // normalised allowed roots; nil: every mount
	cwd    string   // normalised working directory of the namespace
}

func (c *config) parseVirtual(fields map[string]json.RawMessage) error {
	v := &virtualConfig{cwd: "/"}
	raw, ok := fields["mounts"]
	if !ok || string(raw) == "null" {
		return cfgErr("mounts", ErrMissingField)
	}
	var mounts []json.RawMessage
	if err := json.Unmarshal(raw, &mounts); err != nil {
		return cfgErr("mounts", fmt.Errorf("%w: want a list of {\"name\", \"read_only\"}", ErrType))
	}
	seen := map[string]bool{}
	for i, m := range mounts {
		field := fmt.Sprintf("mounts[%d]", i)
		var mf map[string]json.RawMessage
		if err := json.Unmarshal(m, &mf); err != nil || mf == nil {
			return cfgErr(field, fmt.Errorf("%w: want an object {\"name\", \"read_only\"}", ErrType))
		}
		for k := range mf {
			if k != "name" && k != "read_only" {
				return cfgErr(field+"."+k, ErrUnknownField)
			}
		}
		var mt mount
		if r, ok := mf["name"]; !ok || string(r) == "null" {
			return cfgErr(field+".name", ErrMissingField)
		} else if err := json.Unmarshal(r, &mt.name); err != nil {
			return cfgErr(field+".name", fmt.Errorf("%w: want a string", ErrType))
		}
		if r, ok := mf["read_only"]; ok && string(r) != "null" {
			if err := json.Unmarshal(r, &mt.readOnly); err != nil {
				return cfgErr(field+".read_only", fmt.Errorf("%w: want true or false", ErrType))
			}
		}
		// A mount name is a single canonical component.
		if norm, err := normalizeVirtualPath(mt.name, "/"); err != nil || norm != "/"+mt.name || strings.Contains(mt.name, "/") {
			return cfgErr(field+".name", fmt.Errorf("%w: a mount name is one canonical path component, got %q", ErrVirtualPath, mt.name))
		}
		if seen[mt.name] {
			return cfgErr(field+".name", fmt.Errorf("%w: duplicate mount %q", ErrVirtualPath, mt.name))
		}
		seen[mt.name] = true
		v.mounts = append(v.mounts, mt)
	}
	var cwd string
	if err := decodeString(fields, "cwd", &cwd, false); err != nil {
		return err
	}
	if raw, ok := fields["cwd"]; ok && string(raw) != "null" {
		// NB: a blank cwd is refused, as normalize_virtual_path refuses
		// it; only an absent or null cwd means "/".
		norm, err := normalizeVirtualPath(".", cwd)
		if err != nil {
			return cfgErr("cwd", fmt.Errorf("%w: %v", ErrVirtualPath, err))
		}
		v.cwd = norm
	}
	roots, present, err := decodeStrings(fields, "roots")
	if err != nil {
		return err
	}
	if present {
		v.roots = make([]string, 0, len(roots))
		for i, r := range roots {
			norm, err := normalizeVirtualPath(r, "/")
			if err != nil {
				return cfgErr(fmt.Sprintf("roots[%d]", i), fmt.Errorf("%w: %v", ErrVirtualPath, err))
			}
			v.roots = append(v.roots, norm)
		}
	}
	c.virtual = v
	return c.parseOps(fields)
}

// Virtual-kind reason codes.
const (
	ReasonVirtualInvalid = "path.virtual_invalid" // normalize_virtual_path refuses the path (or it is not a string)
	ReasonMountUnknown   = "path.mount_unknown"   // the path is under no configured mount
	ReasonMountRoot      = "path.mount_root"      // a write to "/" or a mount root, which the router owns
	ReasonReadOnly       = "path.read_only"       // a write to a read-only mount
)

// virtualWrites are the operations that change storage.
func virtualWrite(op string) bool {
	switch op {
	case OpCreateFile, OpOverwriteFile, OpModifyFile, OpCreateDirectory:
		return true
	}
	return false
}

// virtualOps infers the operation of AgentLane's own tools where no
// filesystem fact is needed (write and grep depend on existence: they need
// an explicit operation here).
var virtualOps = map[string]string{"read": OpReadFile, "find": OpSearchFiles, "patch": OpModifyFile, "bash": OpExecuteCommand}

func (g *Gate) evalVirtual(in abi.GateInput) abi.GateOutput {
	c, v := g.cfg, g.cfg.virtual
	op := in.Operation
	if op == "" {
		op = virtualOps[in.Tool]
	}
	deny := func(code, subject, detail string) abi.GateOutput {
		return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: code, Detail: detail, Message: deniedMessage(in.Tool, subject, &in)}
	}
	if op == "" {
		return deny(ReasonOperationUnknown, "", "no operation given and none can be inferred for tool "+pyRepr(in.Tool)+" without filesystem facts")
	}
	if _, ok := parseOp(op); !ok {
		return deny(ReasonOperationUnknown, "", "unknown operation "+pyRepr(op))
	}
	if c.ops != nil && !c.ops[op] {
		return deny(ReasonOperationNotAllowed, "", "operation "+op+" is not in allowed_operations")
	}
	if !isPathOp(op) {
		if c.ops == nil {
			return deny(ReasonOperationNotAllowed, "", "operation "+op+" is not a path operation; a path boundary admits it only when allowed_operations lists it")
		}
		return allow(ReasonNonPathOperation, "")
	}
	paths, bad := virtualArgs(in.Arguments)
	if bad != "" {
		return deny(ReasonVirtualInvalid, "", bad)
	}
	if len(paths) == 0 && (in.Tool == "find" || in.Tool == "grep") {
		paths = []string{"."} // they search the namespace's cwd
	}
	if len(paths) == 0 {
		return deny(ReasonMissingPath, "", "path operation "+op+" without a path")
	}
	rule := ""
	for _, raw := range paths {
		p, err := normalizeVirtualPath(raw, v.cwd)
		if err != nil {
			return deny(ReasonVirtualInvalid, "", err.Error())
		}
		name, _, _ := strings.Cut(p[1:], "/")
		var mt *mount
		for i := range v.mounts {
			if v.mounts[i].name == name {
				mt = &v.mounts[i]
			}
		}
		switch {
		case p == "/" || (mt != nil && p == "/"+name):
			if virtualWrite(op) {
				return deny(ReasonMountRoot, p, "the router owns "+p+": it cannot be written")
			}
		case mt == nil:
			return deny(ReasonMountUnknown, p, "no mount serves "+p)
		case mt.readOnly && virtualWrite(op):
			return deny(ReasonReadOnly, p, "mount /"+name+" is read-only")
		}
		admitted := ""
		if v.roots == nil {
			admitted = "/"
		}
		for _, r := range v.roots {
			if within(p, r) {
				admitted = r
				break
			}
		}
		if admitted == "" {
			return deny(ReasonOutsideRoot, p, "virtual path "+p+" is outside the allowed roots")
		}
		if rule == "" {
			rule = admitted
		}
	}
	return allow(ReasonAllowed, rule)
}

// virtualArgs returns the "path" and "file_path" arguments that are not null, in
// that order, or why they cannot be read.
func virtualArgs(args json.RawMessage) ([]string, string) {
	if len(args) == 0 {
		return nil, ""
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, "arguments are not a JSON object"
	}
	var out []string
	for _, name := range [...]string{"path", "file_path"} {
		raw, ok := m[name]
		if !ok || string(raw) == "null" {
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, name + " is not a string"
		}
		// NB: an empty string is a path, and normalize_virtual_path
		// refuses it (path.virtual_invalid); only null or absent is none.
		out = append(out, s)
	}
	return out, ""
}
