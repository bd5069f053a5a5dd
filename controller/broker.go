package controller

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// ErrBrokerOnlyApprovals refuses an immediate allow or deny handed to a
// broker that does not record immediate decisions (AgentLane:
// "ToolApprovalBroker can only broker approvals.").
var ErrBrokerOnlyApprovals = errors.New("controller: approval broker can only broker approvals")

// ApprovalStatus is a brokered request's state.
type ApprovalStatus string

const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalResolved ApprovalStatus = "resolved"
)

// BrokeredApproval is one request a broker holds or held.
type BrokeredApproval struct {
	ID      string
	Request ApprovalRequest
	// Required is the decision that brought the request to the broker.
	Required abi.Decision
	// RequiredReason is that decision's reason text, verbatim (AgentLane's
	// approval_required_decision carries its reason; "" when none).
	RequiredReason string
	// Since is when the request reached the broker.
	Since  time.Time
	Status ApprovalStatus
	// Final is the resolving decision once resolved.
	Final *ApprovalDecision
}

// BrokerEvent is emitted when a request becomes pending or is resolved.
type BrokerEvent struct {
	Kind     ApprovalStatus
	Approval BrokeredApproval
}

// ApprovalBroker parks require_approval requests until an application
// resolves them, AgentLane's ToolApprovalBroker in Go: stable ids
// "tool-approval-N" from one counter, Pending in insertion order, an event
// stream per subscriber (no replay), Resolve only of pending ids, and Close
// ending the streams without resolving anything. It has no timeout of its
// own: the call's context bounds a wait, and a canceled waiter's request is
// dropped silently.
type ApprovalBroker struct {
	recordImmediate bool

	mu      sync.Mutex
	next    int
	pending []*brokered
	subs    map[*brokerSub]struct{}
	closed  bool
}

type brokered struct {
	BrokeredApproval
	done chan ApprovalDecision
}

// NewApprovalBroker returns a broker. With recordImmediate, Decide also
// records allow and deny decisions (a pending then a resolved event).
func NewApprovalBroker(recordImmediate bool) *ApprovalBroker {
	return &ApprovalBroker{recordImmediate: recordImmediate, subs: map[*brokerSub]struct{}{}}
}

// Callback returns the ApprovalCallback to configure on a controller.
func (b *ApprovalBroker) Callback() ApprovalCallback {
	return func(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error) {
		return b.Decide(ctx, req, abi.DecisionRequireApproval)
	}
}

// Decide brokers one decision with no reason text: DecideWith of
// ApprovalDecision{Decision: decision}.
func (b *ApprovalBroker) Decide(ctx context.Context, req ApprovalRequest, decision abi.Decision) (ApprovalDecision, error) {
	return b.DecideWith(ctx, req, ApprovalDecision{Decision: decision})
}

// DecideWith brokers one decision, AgentLane's callback(request, decision).
// require_approval parks the request until Resolve (or ctx ends) and
// returns the resolving decision unchanged; d.Reason is kept as the
// request's RequiredReason. allow and deny, when recording immediate
// decisions, are returned at once as d — its Reason verbatim, which is then
// the agent's text (approvalText) — after a pending and a resolved event
// carrying it; otherwise they are refused with ErrBrokerOnlyApprovals (no
// id consumed, no event). DecidedAt defaults to now.
func (b *ApprovalBroker) DecideWith(ctx context.Context, req ApprovalRequest, d ApprovalDecision) (ApprovalDecision, error) {
	if d.Decision != abi.DecisionRequireApproval {
		if !b.recordImmediate {
			return ApprovalDecision{}, ErrBrokerOnlyApprovals
		}
		d = ownDecision(d)
		b.mu.Lock()
		a := b.newApproval(req, d.Decision, d.Reason)
		b.emit(BrokerEvent{Kind: ApprovalPending, Approval: a.BrokeredApproval})
		final := d
		a.Status, a.Final = ApprovalResolved, &final
		b.emit(BrokerEvent{Kind: ApprovalResolved, Approval: a.BrokeredApproval})
		b.mu.Unlock()
		return d, nil
	}
	b.mu.Lock()
	a := b.newApproval(req, d.Decision, d.Reason)
	b.pending = append(b.pending, a)
	b.emit(BrokerEvent{Kind: ApprovalPending, Approval: a.BrokeredApproval})
	b.mu.Unlock()
	select {
	case d := <-a.done:
		return d, nil
	case <-ctx.Done():
		b.mu.Lock()
		b.drop(a.ID)
		b.mu.Unlock()
		return ApprovalDecision{}, ctx.Err()
	}
}

func (b *ApprovalBroker) newApproval(req ApprovalRequest, required abi.Decision, reason string) *brokered {
	b.next++
	req.ID = "tool-approval-" + strconv.Itoa(b.next)
	return &brokered{
		BrokeredApproval: BrokeredApproval{ID: req.ID, Request: req, Required: required, RequiredReason: reason, Since: time.Now().UTC(), Status: ApprovalPending},
		done:             make(chan ApprovalDecision, 1),
	}
}

func (b *ApprovalBroker) drop(id string) *brokered {
	for i, a := range b.pending {
		if a.ID == id {
			b.pending = append(b.pending[:i:i], b.pending[i+1:]...)
			return a
		}
	}
	return nil
}

// Pending returns the requests waiting for a decision, oldest first.
func (b *ApprovalBroker) Pending() []BrokeredApproval {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BrokeredApproval, len(b.pending))
	for i, a := range b.pending {
		out[i] = a.BrokeredApproval
	}
	return out
}

// Resolve answers a pending request and reports whether id was pending.
// Any decision is accepted; only allow approves. approver is recorded.
func (b *ApprovalBroker) Resolve(id string, decision abi.Decision, approver *governance.ActorRef) bool {
	return b.ResolveDecision(id, ApprovalDecision{Decision: decision, Approver: approver})
}

// ResolveDecision answers a pending request with a whole decision — with a
// Reason to show the agent, or replacement Arguments with an allow — and
// reports whether id was pending. DecidedAt defaults to now.
func (b *ApprovalBroker) ResolveDecision(id string, d ApprovalDecision) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.drop(id)
	if a == nil {
		return false
	}
	d = ownDecision(d)
	a.Status, a.Final = ApprovalResolved, &d
	b.emit(BrokerEvent{Kind: ApprovalResolved, Approval: a.BrokeredApproval})
	a.done <- d
	return true
}

// ownDecision is d with DecidedAt defaulted to now and its approver and
// arguments copied, so the caller's later changes reach no record.
func ownDecision(d ApprovalDecision) ApprovalDecision {
	if d.DecidedAt.IsZero() {
		d.DecidedAt = time.Now().UTC()
	}
	if d.Approver != nil {
		who := *d.Approver
		d.Approver = &who
	}
	if len(d.Arguments) > 0 {
		d.Arguments = append(json.RawMessage(nil), d.Arguments...)
	}
	return d
}

// Events subscribes to events emitted from now on. Each subscriber has its
// own unbounded queue; the channel closes on cancel or Close.
func (b *ApprovalBroker) Events() (events <-chan BrokerEvent, cancel func()) {
	s := newBrokerSub()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		s.close()
		return s.out, func() {}
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s.out, func() {
		b.mu.Lock()
		delete(b.subs, s)
		b.mu.Unlock()
		s.close()
	}
}

// Close ends every event stream; later subscriptions end at once. Pending
// requests stay pending and Resolve still works. Idempotent.
func (b *ApprovalBroker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for s := range b.subs {
		s.close()
		delete(b.subs, s)
	}
}

// emit must be called with b.mu held, so every subscriber sees events in
// one order.
func (b *ApprovalBroker) emit(ev BrokerEvent) {
	for s := range b.subs {
		s.push(ev)
	}
}

// brokerSub is an unbounded queue in front of a channel. Closing it ends
// the stream at once; undelivered events are dropped.
type brokerSub struct {
	mu    sync.Mutex
	queue []BrokerEvent
	wake  chan struct{}
	done  chan struct{}
	once  sync.Once
	out   chan BrokerEvent
}

func newBrokerSub() *brokerSub {
	s := &brokerSub{wake: make(chan struct{}, 1), done: make(chan struct{}), out: make(chan BrokerEvent)}
	go s.pump()
	return s
}

func (s *brokerSub) push(ev BrokerEvent) {
	s.mu.Lock()
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *brokerSub) close() { s.once.Do(func() { close(s.done) }) }

func (s *brokerSub) pump() {
	defer close(s.out)
	for {
		s.mu.Lock()
		var ev BrokerEvent
		ok := len(s.queue) > 0
		if ok {
			ev, s.queue = s.queue[0], s.queue[1:]
		}
		s.mu.Unlock()
		if !ok {
			select {
			case <-s.wake:
				continue
			case <-s.done:
				return
			}
		}
		select {
		case s.out <- ev:
		case <-s.done:
			return
		}
	}
}
