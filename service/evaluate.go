package service

import (
	"context"

	"github.com/google/uuid"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/pathfacts"
)

// EvaluateRequest is a stateless evaluation: what the gates of a policy
// would answer for a call, with nothing recorded and nothing asked of an
// approver.
type EvaluateRequest struct {
	PolicyID  uuid.UUID
	Version   string
	Role      string
	Resource  string
	Workspace string
	Call      controller.Call
}

// GateAnswer is one gate's answer in an evaluation (Error: the gate
// failed to answer).
type GateAnswer struct {
	GateID      string
	Level       string
	Decision    string
	ReasonCode  string
	Message     string
	MatchedRule string
	Error       string
}

// Evaluation is the combined verdict and each gate's answer.
type Evaluation struct {
	PolicyID      uuid.UUID
	PolicyVersion string
	Decision      string
	ReasonCode    string
	Message       string
	MatchedRule   string
	Gates         []GateAnswer
}

// Evaluate runs the gates of the pinned or resolved policy on one call
// (what govhost eval does), recording nothing.
func (s *Service) Evaluate(ctx context.Context, req EvaluateRequest) (Evaluation, error) {
	if req.Call.Tool == "" {
		return Evaluation{}, failf(CodeInvalidRequest, "tool is required")
	}
	var snap governance.PolicySnapshot
	var err error
	if req.PolicyID != uuid.Nil || req.Version != "" {
		if req.PolicyID == uuid.Nil || req.Version == "" {
			return Evaluation{}, failf(CodeInvalidRequest, "policy_id and version go together")
		}
		snap, err = s.eng.Policies.Get(ctx, req.PolicyID, req.Version)
	} else {
		snap, err = s.eng.Policies.Resolve(ctx, req.Role, req.Resource)
	}
	if err != nil {
		return Evaluation{}, policyError(err)
	}
	res, err := controller.DryRun(ctx, s.eng.Gates, snap, req.Call, controller.DryRunOptions{Workspace: req.Workspace, PathFacts: pathfacts.ResolveCall})
	if err != nil {
		return Evaluation{}, fail(CodeInvalidRequest, err)
	}
	out := Evaluation{
		PolicyID: snap.PolicyID(), PolicyVersion: snap.Version(), Decision: string(res.Decision), ReasonCode: res.ReasonCode,
		Message: res.Message, MatchedRule: res.MatchedRule, Gates: make([]GateAnswer, 0, len(res.Gates)),
	}
	for _, g := range res.Gates {
		a := GateAnswer{GateID: g.GateID, Level: string(g.Level), Decision: string(g.Output.Decision), ReasonCode: g.Output.ReasonCode, Message: g.Output.Message, MatchedRule: g.Output.MatchedRule}
		if g.Err != nil {
			a.Error = g.Err.Error()
		}
		out.Gates = append(out.Gates, a)
	}
	return out, nil
}
