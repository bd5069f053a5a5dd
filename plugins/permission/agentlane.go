package permission

import (
	"strconv"
	"strings"

	"github.com/govhost/govhost/abi"
)

// AgentLane's ToolPermissionGrantPolicy and
// SideEffectApprovalToolPermissionPolicy, composed as AllOf (deny wins, then
// approval, then allow).

type agentLanePolicy struct {
	grantLayer bool
	grants     []grant

	approvalLayer  bool
	approvalOps    opSet
	approvalGrants []grant
}

func newAgentLanePolicy(c *AgentLaneConfig) (*agentLanePolicy, error) {
	anyOp := false
	switch c.WholeToolGrants {
	case "", WholeToolDeclared:
	case WholeToolAnyOperation:
		anyOp = true
	default:
		return nil, configErr("agentlane.whole_tool_grants", ErrBadValue,
			"unknown value %q (want %q or %q)", c.WholeToolGrants, WholeToolDeclared, WholeToolAnyOperation)
	}

	// known_tools first, then the built-ins over them: a built-in name wins.
	tools := make(map[string][]operation, len(builtinTools)+len(c.KnownTools))
	for _, kt := range c.KnownTools {
		var ops []operation
		for i, name := range kt.Operations {
			op, ok := parseOperation(name)
			if !ok {
				return nil, configErr(fieldPath("agentlane.known_tools", kt.Tool)+
					"["+strconv.Itoa(i)+"]", ErrUnknownOperation, "unknown operation %q (want one of %s)",
					name, strings.Join(operationNames[:], ", "))
			}
			if !containsOp(ops, op) {
				ops = append(ops, op)
			}
		}
		tools[kt.Tool] = ops
	}
	for name, ops := range builtinTools {
		tools[name] = ops
	}

	p := &agentLanePolicy{}
	if c.Grants != nil {
		grants, invalid := parseGrants(*c.Grants, tools, anyOp)
		if len(invalid) > 0 {
			return nil, invalidGrants("agentlane.grants", invalid)
		}
		p.grantLayer = true
		p.grants = grants
	}
	if sc := c.SideEffectApproval; sc != nil {
		p.approvalLayer = true
		p.approvalOps = sideEffectOps
		if sc.Operations != nil {
			p.approvalOps = 0
			for i, name := range sc.Operations {
				op, ok := parseOperation(name)
				if !ok {
					return nil, configErr("agentlane.side_effect_approval.operations["+strconv.Itoa(i)+"]",
						ErrUnknownOperation, "unknown operation %q (want one of %s)",
						name, strings.Join(operationNames[:], ", "))
				}
				p.approvalOps |= setOf(op)
			}
		}
		switch {
		case sc.Grants != nil && sc.GrantsDowngrade:
			return nil, configErr("agentlane.side_effect_approval", ErrConflict,
				`"grants" and "grants_downgrade" exclude each other`)
		case sc.Grants != nil:
			grants, invalid := parseGrants(*sc.Grants, tools, anyOp)
			if len(invalid) > 0 {
				return nil, invalidGrants("agentlane.side_effect_approval.grants", invalid)
			}
			p.approvalGrants = grants
		case sc.GrantsDowngrade:
			// workspace_tool_policy: grants=None with the flag set downgrades nothing.
			p.approvalGrants = p.grants
		}
	}
	return p, nil
}

func invalidGrants(field string, entries []string) *ConfigError {
	quoted := make([]string, len(entries))
	for i, e := range entries {
		quoted[i] = pyQuote(e)
	}
	return &ConfigError{
		Field:   field,
		Kind:    ErrInvalidGrants,
		Detail:  "unsupported tool grants: (" + strings.Join(quoted, ", ") + trailingComma(len(entries)) + ")",
		Entries: entries,
	}
}

// trailingComma makes a one-element list print as Python's tuple does.
func trailingComma(n int) string {
	if n == 1 {
		return ","
	}
	return ""
}

func (p *agentLanePolicy) evaluate(in *abi.GateInput) abi.GateOutput {
	args, err := decodeArguments(in.Arguments, nil)
	if err != nil {
		return invalidArguments(in, err)
	}
	reqs, out, ok := buildRequests(in, &args)
	if !ok {
		return out
	}
	// AgentLane's write tool asks once per request and stops at the first
	// refusal; a gate answers once, so every request is evaluated and the
	// strictest answer wins (the first deny, else the first approval).
	var approval *abi.GateOutput
	var allow abi.GateOutput
	for i := range reqs {
		o := p.check(&reqs[i])
		switch o.Decision {
		case abi.DecisionDeny:
			return o
		case abi.DecisionRequireApproval:
			if approval == nil {
				approval = &o
			}
		default:
			allow = o
		}
	}
	if approval != nil {
		return *approval
	}
	return allow
}

// check evaluates one request against the layers in AllOf order.
func (p *agentLanePolicy) check(r *alRequest) abi.GateOutput {
	var granted *grant
	if p.grantLayer {
		granted = firstGrant(p.grants, r.tool, r.op)
		if granted == nil {
			return abi.GateOutput{
				Decision:   abi.DecisionDeny,
				ReasonCode: CodeNotGranted,
				Detail:     "no grant allows " + r.tool + ":" + r.op.String(),
				Message:    formatDenied(r),
			}
		}
	}
	if p.approvalLayer && p.approvalOps.has(r.op) {
		if g := firstGrant(p.approvalGrants, r.tool, r.op); g != nil {
			return abi.GateOutput{
				Decision:    abi.DecisionAllow,
				ReasonCode:  CodeApprovalDowngraded,
				Detail:      r.op.String() + " approval downgraded by grant " + g.entry,
				MatchedRule: g.entry,
			}
		}
		return abi.GateOutput{
			Decision:    abi.DecisionRequireApproval,
			ReasonCode:  CodeSideEffectApproval,
			Detail:      r.op.String() + " is a side effect that requires approval",
			Message:     formatApproval(r),
			DenyMessage: formatDenied(r),
		}
	}
	switch {
	case granted != nil:
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: CodeGranted,
			Detail: "granted by " + granted.entry, MatchedRule: granted.entry}
	case p.approvalLayer:
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: CodeNotSideEffect,
			Detail: r.op.String() + " is not a covered side effect"}
	}
	return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: CodeNoLayers,
		Detail: "no AgentLane policy layer is configured"}
}
