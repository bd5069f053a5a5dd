package hooks

import (
	"context"
	"time"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// ApprovalMode chooses what a gate's require_approval becomes.
type ApprovalMode string

const (
	// ApprovalAsk hands the question to the agent's own permission prompt
	// (Claude Code, Cursor, Copilot CLI): the call is answered "ask", and
	// the approval is recorded as delegated to that prompt. Whether the
	// person agreed shows in the evidence as the call's outcome: completed,
	// or no outcome at the session's end.
	ApprovalAsk ApprovalMode = "ask"
	// ApprovalHold holds the call on govhost's approval broker until a
	// person resolves it (or the hold times out: denied).
	ApprovalHold ApprovalMode = "hold"
)

// askKey marks a call whose approvals go to the agent's prompt.
type askKey struct{}

// asked collects the approval delegated during one authorize: the
// asking gate's reason and message become the agent's question.
type asked struct {
	delegated       bool
	reason, message string
}

func withAsk(ctx context.Context) (context.Context, *asked) {
	a := &asked{}
	return context.WithValue(ctx, askKey{}, a), a
}

// ApprovalCallback wraps the server's approval callback (usually the
// broker's) so that hook calls in ask mode are answered by the agent's
// prompt instead of held; every other approval goes to next. Install it as
// controller.Config.Approvals of the controller the Service uses. A nil
// next denies held approvals (approval.required).
func ApprovalCallback(next controller.ApprovalCallback, now func() time.Time) controller.ApprovalCallback {
	if now == nil {
		now = time.Now
	}
	return func(ctx context.Context, req controller.ApprovalRequest) (controller.ApprovalDecision, error) {
		if a, ok := ctx.Value(askKey{}).(*asked); ok {
			a.delegated, a.reason, a.message = true, req.ReasonCode, req.Message
			return controller.ApprovalDecision{
				Decision:  abi.DecisionAllow,
				Approver:  &governance.ActorRef{Kind: "agent_prompt", ID: req.AgentName},
				DecidedAt: now().UTC(),
			}, nil
		}
		if next == nil {
			return controller.ApprovalDecision{Decision: abi.DecisionDeny}, nil
		}
		return next(ctx, req)
	}
}
