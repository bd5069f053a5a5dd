package service

import (
	"context"
	"github.com/govhost/govhost/api"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// approve is the controller's approval callback: the broker decides; an
// authorization waiting in a request learns the approval id first.
func (s *Service) approve(ctx context.Context, req controller.ApprovalRequest) (controller.ApprovalDecision, error) {
	if a, ok := ctx.Value(authzKey{}).(*authorization); ok {
		s.authz.watch(req.OperationID, a)
		defer s.authz.unwatch(req.OperationID)
	}
	return s.broker.Decide(ctx, req, abi.DecisionRequireApproval)
}

// routeApprovalEvents tells a waiting authorization its approval id.
func (s *Service) routeApprovalEvents(events <-chan controller.BrokerEvent) {
	defer close(s.done)
	for ev := range events {
		if ev.Kind != controller.ApprovalPending {
			continue
		}
		if a := s.authz.watching(ev.Approval.Request.OperationID); a != nil {
			a.mu.Lock()
			a.approvalID = ev.Approval.ID
			a.mu.Unlock()
			a.asked.Do(func() { close(a.pending) })
		}
	}
}

type Approval = api.Approval

// ApprovalOf converts a brokered approval.
func ApprovalOf(a controller.BrokeredApproval) Approval {
	out := Approval{
		ApprovalID: a.ID, OperationID: a.Request.OperationID, Tool: a.Request.Tool, Operation: a.Request.Operation,
		GateID: a.Request.GateID, ReasonCode: a.Request.ReasonCode, Message: a.Request.Message, Actor: a.Request.Actor,
		Arguments: a.Request.Arguments, Status: string(a.Status),
	}
	if a.Final != nil {
		out.Decision = string(a.Final.Decision)
		t := a.Final.DecidedAt
		out.DecidedAt = &t
	}
	return out
}

// PendingApprovalList returns the approvals waiting for a decision, oldest
// first.
func (s *Service) PendingApprovalList() []Approval {
	pending := s.broker.Pending()
	out := make([]Approval, len(pending))
	for i, a := range pending {
		out[i] = ApprovalOf(a)
	}
	return out
}

// ResolveApproval answers a pending approval: allow approves, deny
// rejects. approver is recorded in evidence.
func (s *Service) ResolveApproval(id string, decision abi.Decision, approver *governance.ActorRef) error {
	if decision != abi.DecisionAllow && decision != abi.DecisionDeny {
		return failf(CodeInvalidRequest, "decision must be allow or deny")
	}
	if approver != nil {
		if err := approver.Validate(); err != nil {
			return fail(CodeInvalidRequest, err)
		}
	}
	if !s.broker.Resolve(id, decision, approver) {
		return failf(CodeApprovalNotFound, "approval %q is not pending", id)
	}
	return nil
}

// ApprovalEvents subscribes to approval events from now on (AgentLane's
// broker events: pending, resolved). Call cancel when done.
func (s *Service) ApprovalEvents() (<-chan controller.BrokerEvent, func()) { return s.broker.Events() }
