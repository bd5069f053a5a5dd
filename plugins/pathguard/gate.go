package pathguard

import (
	"path"
	"strings"

	"github.com/govhost/govhost/abi"
)

// Reason codes. They are stable: policies and evidence refer to them.
const (
	// Allow.
	ReasonAllowed          = "path.allowed"            // every checked path is inside
	ReasonNoPath           = "path.no_path"            // guard_paths: no path or file_path argument
	ReasonNonPathOperation = "path.non_path_operation" // an admitted non-path operation (allowed_operations)
	ReasonNotChecked       = "path.not_checked"        // workspace / path_scope: an operation checked_operations leaves out

	// Deny.
	ReasonOutsideRoot         = "path.outside_root"          // not under any allowed root / the workspace root
	ReasonOutsideScope        = "path.outside_scope"         // path_scope: no scope admits the path
	ReasonDenied              = "path.denied"                // guard_paths: a denied_paths rule matched
	ReasonSymlink             = "path.symlink"               // guard_paths: the path goes through a symlink
	ReasonProtected           = "path.protected"             // guard_paths: protected basename (.env, id_rsa, ...)
	ReasonOperationNotAllowed = "path.operation_not_allowed" // operation not in allowed_operations, or a non-path operation without it
	ReasonOperationUnknown    = "path.operation_unknown"     // no operation given and none can be inferred, or not an AgentLane operation
	ReasonMissingPath         = "path.missing"               // a path operation without a path
	ReasonUnverifiable        = "path.unverifiable"          // the gate cannot check the path ("~" without home, relative path without cwd)
	ReasonInvalidFact         = "path.invalid_fact"          // a path fact that is not absolute and clean
	ReasonNoWorkspace         = "path.no_workspace"          // the policy names "$workspace" and the task has none (or not a clean absolute one)
)

// Gate is a configured pathguard. Create it with New; it is immutable and
// safe for concurrent use.
type Gate struct {
	cfg *config
}

// New parses configJSON (schema in README.md) and returns the gate. Errors
// are *ConfigError values naming the field; they match ErrConfig and the
// specific sentinel with errors.Is.
func New(configJSON []byte) (*Gate, error) {
	c, err := parseConfig(configJSON)
	if err != nil {
		return nil, err
	}
	return &Gate{cfg: c}, nil
}

// Kind returns the configured kind (KindGuardPaths, KindWorkspace or
// KindPathScope).
func (g *Gate) Kind() string { return g.cfg.kind }

// Evaluate decides on in.Paths, in.Cwd, in.Tool and in.Operation (and, for
// the wording of a denial only, whether in.Arguments has a "command"). It
// answers allow or deny, never require_approval: neither original path
// policy asks for approval.
func (g *Gate) Evaluate(in abi.GateInput) abi.GateOutput {
	if g.cfg.checked != nil && !g.checks(&in) {
		return allow(ReasonNotChecked, "")
	}
	if g.cfg.usesWorkspace {
		ws := in.Workspace
		if !strings.HasPrefix(ws, "/") || path.Clean(ws) != ws {
			subject := ""
			if len(in.Paths) > 0 {
				subject = in.Paths[0].Resolved
			}
			detail := "the policy names $workspace, and the task has no workspace"
			if ws != "" {
				detail = "the policy names $workspace, and the task's workspace " + pyRepr(ws) + " is not a clean absolute path"
			}
			return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: ReasonNoWorkspace, Detail: detail,
				Message: deniedMessage(in.Tool, subject, &in)}
		}
		g = &Gate{cfg: g.cfg.withWorkspace(ws)}
	}
	switch g.cfg.kind {
	case KindGuardPaths:
		return g.evalGuardPaths(in)
	case KindVirtual:
		return g.evalVirtual(in)
	}
	return g.evalAgentLane(in)
}

// checks reports whether checked_operations covers the call: its
// operation, or one of the requests inferred for an AgentLane tool.
func (g *Gate) checks(in *abi.GateInput) bool {
	if in.Operation != "" {
		return g.cfg.checked[in.Operation]
	}
	reqs, _ := inferRequests(in.Tool, in.Paths, in.Cwd)
	for _, r := range reqs {
		if g.cfg.checked[r.op] {
			return true
		}
	}
	return false
}

func allow(code, rule string) abi.GateOutput {
	return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: code, MatchedRule: rule}
}

// validFact reports an absolute, lexically clean Resolved path; anything
// else could defeat a lexical containment test.
func validFact(f *abi.PathFact) bool {
	return strings.HasPrefix(f.Resolved, "/") && path.Clean(f.Resolved) == f.Resolved
}

// within reports p == root or p beneath root, comparing whole components
// (so /x/secrets does not contain /x/secrets-public). Both are clean and
// absolute.
func within(p, root string) bool {
	if root == "/" {
		return true
	}
	return p == root || (len(p) > len(root) && p[len(root)] == '/' && p[:len(root)] == root)
}

// strictlyWithin reports p beneath root, not equal to it.
func strictlyWithin(p, root string) bool { return p != root && within(p, root) }
