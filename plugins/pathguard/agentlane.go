package pathguard

import (
	"path"
	"strings"

	"github.com/govhost/govhost/abi"
)

// evalAgentLane is AgentLane's WorkspaceToolPermissionPolicy (one scope,
// the root) or PathScopeToolPermissionPolicy, run on one request per path
// fact. A request with several path facts is allowed only if each is.
func (g *Gate) evalAgentLane(in abi.GateInput) abi.GateOutput {
	facts := in.Paths
	for k := range facts {
		if facts[k].Raw == "" && facts[k].Resolved == "" {
			// Rare: drop empty facts (no path) from a copy.
			facts = make([]abi.PathFact, 0, len(in.Paths))
			for _, f := range in.Paths {
				if f.Raw != "" || f.Resolved != "" {
					facts = append(facts, f)
				}
			}
			break
		}
	}
	op := in.Operation
	if op == "" {
		// The caller did not classify the call: infer AgentLane's request
		// the way its first-party tool would build it (research §9).
		reqs, ok := inferRequests(in.Tool, facts, in.Cwd)
		if !ok {
			return g.alDeny(&in, firstFact(facts), ReasonOperationUnknown,
				"no operation given and none can be inferred for tool "+pyRepr(in.Tool))
		}
		rule := ""
		for _, r := range reqs {
			out := g.checkRequest(&in, r.op, r.facts)
			if out.Decision != abi.DecisionAllow {
				return out
			}
			rule = out.MatchedRule
		}
		return allowWith(reqs[len(reqs)-1].op, rule)
	}
	if _, ok := parseOp(op); !ok {
		return g.alDeny(&in, firstFact(facts), ReasonOperationUnknown, "unknown operation "+pyRepr(op))
	}
	if len(facts) == 0 && isPathOp(op) && (in.Tool == "find" || in.Tool == "grep") && in.Cwd != "" {
		facts = []abi.PathFact{cwdFact(in.Cwd)} // NB: never append to the caller's slice
	}
	return g.checkRequest(&in, op, facts)
}

func allowWith(op, rule string) abi.GateOutput {
	if !isPathOp(op) {
		return allow(ReasonNonPathOperation, "")
	}
	return allow(ReasonAllowed, rule)
}

// checkRequest is the policy's check(request) for one operation.
func (g *Gate) checkRequest(in *abi.GateInput, op string, facts []abi.PathFact) abi.GateOutput {
	c := g.cfg
	if c.ops != nil && !c.ops[op] {
		return g.alDeny(in, firstFact(facts), ReasonOperationNotAllowed, "operation "+op+" is not in allowed_operations")
	}
	if !isPathOp(op) {
		if c.ops == nil {
			return g.alDeny(in, firstFact(facts), ReasonOperationNotAllowed,
				"operation "+op+" is not a path operation; a path boundary admits it only when allowed_operations lists it")
		}
		return allow(ReasonNonPathOperation, "")
	}
	if len(facts) == 0 {
		return g.alDeny(in, nil, ReasonMissingPath, "path operation "+op+" without a path")
	}
	rule := ""
	for k := range facts {
		f := &facts[k]
		if !validFact(f) {
			return g.alDeny(in, f, ReasonInvalidFact, "path fact for "+pyRepr(f.Arg)+" is not an absolute clean path")
		}
		if c.kind == KindWorkspace {
			if !within(f.Resolved, c.scopes[0]) {
				return g.alDeny(in, f, ReasonOutsideRoot, "path "+f.Resolved+" resolves outside the workspace root "+c.scopes[0])
			}
			rule = c.scopes[0]
			continue
		}
		scope, ok := c.matchScope(f)
		if !ok {
			return g.alDeny(in, f, ReasonOutsideScope, "path "+f.Resolved+" is in no approved scope")
		}
		if rule == "" {
			rule = scope
		}
	}
	return allow(ReasonAllowed, rule)
}

// matchScope finds the first scope admitting f. AgentLane checks each
// scope's existence and type when the request is evaluated; the gate infers
// them from the request's fact, whose NearestExisting is a directory:
//
//   - f is the scope itself: allowed whatever the scope is (directory,
//     file, or missing future path);
//   - f is beneath the scope: allowed only if the scope is an existing
//     directory, which holds exactly when f exists or its nearest existing
//     directory is the scope or beneath it.
func (c *config) matchScope(f *abi.PathFact) (string, bool) {
	nearest := ""
	if f.NearestExisting != "" && path.Clean(f.NearestExisting) == f.NearestExisting && within(f.Resolved, f.NearestExisting) {
		nearest = f.NearestExisting
	}
	for _, s := range c.scopes {
		if f.Resolved == s {
			return s, true
		}
		if !strictlyWithin(f.Resolved, s) {
			continue
		}
		if f.Exists || (nearest != "" && within(nearest, s)) {
			return s, true
		}
	}
	return "", false
}

// alDeny renders a deny with AgentLane's model-facing text. The subject is
// the request's path (its resolved form, as AgentLane's tools send it).
func (g *Gate) alDeny(in *abi.GateInput, f *abi.PathFact, code, detail string) abi.GateOutput {
	subject := ""
	if f != nil {
		subject = f.Resolved
	}
	return abi.GateOutput{
		Decision:   abi.DecisionDeny,
		ReasonCode: code,
		Detail:     detail,
		Message:    deniedMessage(in.Tool, subject, in),
	}
}

func firstFact(facts []abi.PathFact) *abi.PathFact {
	if len(facts) == 0 {
		return nil
	}
	return &facts[0]
}

// cwdFact stands for the working directory that AgentLane's find and grep
// search when no path is given. The host resolved cwd; it exists.
func cwdFact(cwd string) abi.PathFact {
	p := path.Clean(cwd)
	return abi.PathFact{Arg: "cwd", Raw: cwd, Resolved: p, Exists: true, Kind: abi.PathKindDir, NearestExisting: p}
}

type request struct {
	op    string
	facts []abi.PathFact
}

// inferRequests builds the permission requests AgentLane's first-party
// tools send for a call (research §9):
//
//	read  read_file            find  search_files (path, or cwd)
//	grep  read_file for an existing file, else search_files (path, or cwd)
//	patch modify_file          bash  execute_command
//	write create_directory for a missing parent, then overwrite_file if the
//	      target exists (a directory counts), else create_file
func inferRequests(tool string, facts []abi.PathFact, cwd string) ([]request, bool) {
	one := func(op string, fs []abi.PathFact) ([]request, bool) { return []request{{op, fs}}, true }
	switch tool {
	case "read":
		return one(OpReadFile, facts)
	case "patch":
		return one(OpModifyFile, facts)
	case "bash":
		return one(OpExecuteCommand, nil)
	case "find", "grep":
		if len(facts) == 0 && cwd != "" {
			facts = []abi.PathFact{cwdFact(cwd)}
		}
		if tool == "grep" && len(facts) == 1 && facts[0].Exists && facts[0].Kind == abi.PathKindFile {
			return one(OpReadFile, facts)
		}
		return one(OpSearchFiles, facts)
	case "write":
		if len(facts) != 1 {
			return one(OpCreateFile, facts) // no path: denied as missing
		}
		f := facts[0]
		if f.Exists {
			return one(OpOverwriteFile, facts)
		}
		var reqs []request
		if parent := path.Dir(f.Resolved); strings.HasPrefix(f.Resolved, "/") && f.NearestExisting != parent {
			reqs = append(reqs, request{OpCreateDirectory, []abi.PathFact{{
				Arg: f.Arg, Raw: path.Dir(f.Raw), Resolved: parent,
				Kind: abi.PathKindMissing, NearestExisting: f.NearestExisting,
			}}})
		}
		return append(reqs, request{OpCreateFile, facts}), true
	}
	return nil, false
}
