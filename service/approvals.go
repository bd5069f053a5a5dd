package service

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// CodeApprovalChanged refuses an answer bound to other arguments than the
// held call's: the approver saw something else.
const CodeApprovalChanged Code = "approval_arguments_changed"

// TimeoutApprover is who denies a call nobody answered within
// Options.ApprovalTimeout.
var TimeoutApprover = governance.ActorRef{Kind: "system", ID: "timeout"}

// approve is the controller's approval callback: the broker decides; an
// authorization waiting in a request learns the approval id first.
func (s *Service) approve(ctx context.Context, req controller.ApprovalRequest) (controller.ApprovalDecision, error) {
	if a, ok := ctx.Value(authzKey{}).(*authorization); ok {
		s.authz.watch(req.OperationID, a)
		defer s.authz.unwatch(req.OperationID)
		// An authorization from a request is detached from it (Authorize):
		// its wait has a backstop past the approval timeout, which denies
		// (system/timeout) while there is still time to record it.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.ApprovalTimeout+time.Minute)
		defer cancel()
	}
	return s.broker.Decide(ctx, req, abi.DecisionRequireApproval)
}

// routeApprovalEvents tells a waiting authorization its approval id,
// announces the ask on the decision stream and starts the approval's
// timeout; a resolution stops it.
func (s *Service) routeApprovalEvents(events <-chan controller.BrokerEvent) {
	defer close(s.done)
	for ev := range events {
		if ev.Kind != controller.ApprovalPending {
			s.timeouts.stop(ev.Approval.ID)
			continue
		}
		s.timeouts.start(ev.Approval.ID, s.opts.ApprovalTimeout, s.expire)
		s.decisions.publish(askEvent(ev.Approval))
		if a := s.authz.watching(ev.Approval.Request.OperationID); a != nil {
			a.mu.Lock()
			a.approvalID = ev.Approval.ID
			a.mu.Unlock()
			a.asked.Do(func() { close(a.pending) })
		}
	}
}

// expire denies an approval nobody answered in time, by system/timeout.
func (s *Service) expire(id string) {
	who := TimeoutApprover
	s.broker.ResolveDecision(id, controller.ApprovalDecision{
		Decision: abi.DecisionDeny, Approver: &who,
		Reason: fmt.Sprintf("approval required: nobody answered within %s; denied", s.opts.ApprovalTimeout),
	})
}

// approvalTimers holds one timer per pending approval.
type approvalTimers struct {
	mu     sync.Mutex
	timers map[string]*time.Timer
}

func (t *approvalTimers) start(id string, after time.Duration, fire func(string)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timers == nil {
		t.timers = map[string]*time.Timer{}
	}
	t.timers[id] = time.AfterFunc(after, func() {
		t.mu.Lock()
		delete(t.timers, id)
		t.mu.Unlock()
		fire(id)
	})
}

func (t *approvalTimers) stop(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if tm := t.timers[id]; tm != nil {
		tm.Stop()
		delete(t.timers, id)
	}
}

// Approval is a brokered request as an approver sees it. Arguments are
// shown to the approver and never recorded.
type Approval struct {
	ApprovalID  string
	OperationID uuid.UUID
	Tool        string
	Operation   string
	GateID      string
	ReasonCode  string
	Message     string
	Actor       *governance.ActorRef
	// Arguments are the held call's; nil once it is decided.
	Arguments json.RawMessage
	Status    string
	// Decision, DecidedAt and Approver are set once it is decided
	// (Approver: console:<session>, link:<approval id>, system/timeout, or
	// the approver an API client named).
	Decision  string
	DecidedAt *time.Time
	Approver  *governance.ActorRef
	// ArgumentDigest is the sha256 of Arguments; a resolution may be bound
	// to it (ApprovalResolution.ArgumentDigest).
	ArgumentDigest string
	Action         string
	MatchedRule    string
	AgentName      string
	RunID          string
	ToolCallID     string
	Cwd            string
	PathFacts      []abi.PathFact
	// Since is when the call began to wait.
	Since time.Time
}

// BrokerEvent is an approval event (ApprovalEvents): pending or resolved.
type BrokerEvent = controller.BrokerEvent

// ApprovalPending is the kind of a BrokerEvent for a call that starts to
// wait.
const ApprovalPending = controller.ApprovalPending

// ApprovalOf converts a brokered approval.
func ApprovalOf(a controller.BrokeredApproval) Approval {
	r := a.Request
	out := Approval{
		ApprovalID: a.ID, OperationID: r.OperationID, Tool: r.Tool, Operation: r.Operation,
		GateID: r.GateID, ReasonCode: r.ReasonCode, Message: r.Message, Actor: r.Actor,
		Arguments: r.Arguments, Status: string(a.Status), ArgumentDigest: r.ArgumentDigest, Action: r.Action,
		MatchedRule: r.MatchedRule, AgentName: r.AgentName, RunID: r.RunID, ToolCallID: r.ToolCallID, Cwd: r.Cwd,
		PathFacts: r.PathFacts, Since: a.Since,
	}
	if a.Final != nil {
		out.Decision = string(a.Final.Decision)
		t := a.Final.DecidedAt
		out.DecidedAt = &t
		out.Approver = a.Final.Approver
		out.Arguments = nil // the call is no longer held: its values are not shown again
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

// PendingApproval returns one approval while it waits for a decision.
func (s *Service) PendingApproval(id string) (Approval, error) {
	for _, a := range s.broker.Pending() {
		if a.ID == id {
			return ApprovalOf(a), nil
		}
	}
	return Approval{}, failf(CodeApprovalNotFound, "approval %q is not pending (answered, timed out, or unknown)", id)
}

// The two answers an approver gives.
const (
	Approve = abi.DecisionAllow
	Reject  = abi.DecisionDeny
)

// ApprovalResolution is an approver's answer to one pending approval.
type ApprovalResolution struct {
	// Decision is allow (approve) or deny.
	Decision abi.Decision
	// ArgumentDigest, when set, must be the held call's argument digest:
	// an answer given while looking at other arguments resolves nothing.
	ArgumentDigest string
	// Approver is recorded in evidence with the decision.
	Approver *governance.ActorRef
	// Reason, with a deny, is the text the agent is shown; never recorded.
	Reason string
}

// ResolveApproval answers a pending approval: allow approves, deny
// rejects. approver is recorded in evidence.
func (s *Service) ResolveApproval(id string, decision abi.Decision, approver *governance.ActorRef) error {
	return s.Resolve(id, ApprovalResolution{Decision: decision, Approver: approver})
}

// Resolve answers a pending approval once: a second answer, or one for an
// approval that timed out, is CodeApprovalNotFound; one bound to other
// arguments is CodeApprovalChanged and leaves the approval pending.
func (s *Service) Resolve(id string, r ApprovalResolution) error {
	if r.Decision != abi.DecisionAllow && r.Decision != abi.DecisionDeny {
		return failf(CodeInvalidRequest, "decision must be allow or deny")
	}
	if r.Approver != nil {
		if err := r.Approver.Validate(); err != nil {
			return fail(CodeInvalidRequest, err)
		}
	}
	if r.ArgumentDigest != "" {
		// NB: an approval id names one request whose arguments never
		// change, so checking before resolving is not a race: if it is
		// answered in between, ResolveDecision below finds nothing.
		held, err := s.PendingApproval(id)
		if err != nil {
			return err
		}
		if held.ArgumentDigest != r.ArgumentDigest {
			return failf(CodeApprovalChanged, "approval %q holds arguments with digest %s, not %s", id, held.ArgumentDigest, r.ArgumentDigest)
		}
	}
	d := controller.ApprovalDecision{Decision: r.Decision, Approver: r.Approver}
	if r.Decision == abi.DecisionDeny {
		d.Reason = r.Reason
	}
	if !s.broker.ResolveDecision(id, d) {
		return failf(CodeApprovalNotFound, "approval %q is not pending (answered, timed out, or unknown)", id)
	}
	return nil
}

// ApprovalEvents subscribes to approval events from now on (AgentLane's
// broker events: pending, resolved). Call cancel when done.
func (s *Service) ApprovalEvents() (<-chan controller.BrokerEvent, func()) { return s.broker.Events() }
