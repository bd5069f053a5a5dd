package service

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/controller"
)

// DecisionEvent is one verdict as the live stream shows it: allow, deny
// (with the gate, reason code and message), ask (a gate wants an
// approver), or failed (no verdict: evidence could not be written). Never
// argument values.
type DecisionEvent struct {
	At             time.Time
	Verdict        Verdict
	TaskID         uuid.UUID
	ChainID        uuid.UUID
	OperationID    uuid.UUID
	Tool           string
	Operation      string
	AgentName      string
	RunID          string
	ToolCallID     string
	ArgumentDigest string
	GateID         string
	ReasonCode     string
	Message        string
	ApprovalID     string
}

// Verdict is what a DecisionEvent reports.
type Verdict string

// Verdicts of a DecisionEvent.
const (
	VerdictAllow  Verdict = "allow"
	VerdictDeny   Verdict = "deny"
	VerdictAsk    Verdict = "ask"
	VerdictFailed Verdict = "failed"
)

// Bounds of the decision stream.
const (
	// MaxDecisionSubscribers bounds the live streams open at once.
	MaxDecisionSubscribers = 64
	// decisionBuffer is how many verdicts a subscriber may fall behind
	// before it is dropped.
	decisionBuffer = 256
)

// CodeTooManySubscribers refuses a decision stream beyond
// MaxDecisionSubscribers.
const CodeTooManySubscribers Code = "too_many_subscribers"

// decisionHub fans verdicts out to live subscribers. It never blocks a
// governed call: a subscriber whose buffer is full is dropped (its channel
// closed) and counted, and with nobody listening a verdict costs one
// atomic load.
type decisionHub struct {
	listeners atomic.Int32
	dropped   atomic.Int64
	mu        sync.Mutex
	subs      map[chan DecisionEvent]struct{}
	closed    bool
}

func (h *decisionHub) publish(ev DecisionEvent) {
	if h.listeners.Load() == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- ev:
		default:
			delete(h.subs, ch)
			close(ch)
			h.listeners.Add(-1)
			h.dropped.Add(1)
		}
	}
}

func (h *decisionHub) subscribe() (<-chan DecisionEvent, func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		ch := make(chan DecisionEvent)
		close(ch)
		return ch, func() {}, nil
	}
	if len(h.subs) >= MaxDecisionSubscribers {
		return nil, nil, failf(CodeTooManySubscribers, "%d decision streams are open; close one first", MaxDecisionSubscribers)
	}
	if h.subs == nil {
		h.subs = map[chan DecisionEvent]struct{}{}
	}
	ch := make(chan DecisionEvent, decisionBuffer)
	h.subs[ch] = struct{}{}
	h.listeners.Add(1)
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
			h.listeners.Add(-1)
		}
	}, nil
}

func (h *decisionHub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
	h.listeners.Store(0)
}

// DecisionEvents subscribes to verdicts from now on: every authorization's
// allow, deny or failure and every ask. The channel closes when cancel is
// called, when the service closes, or when the subscriber falls
// decisionBuffer verdicts behind (a slow reader never slows a call);
// beyond MaxDecisionSubscribers streams it is CodeTooManySubscribers.
func (s *Service) DecisionEvents() (<-chan DecisionEvent, func(), error) {
	return s.decisions.subscribe()
}

// DroppedDecisionStreams counts subscribers dropped for falling behind.
func (s *Service) DroppedDecisionStreams() int64 { return s.decisions.dropped.Load() }

// decided is the controller's Config.Decided.
func (s *Service) decided(d controller.Decided) {
	if s.decisions.listeners.Load() == 0 {
		return
	}
	ev := DecisionEvent{
		At: d.At, Verdict: VerdictAllow, TaskID: d.TaskBoundaryID, ChainID: d.ChainID, OperationID: d.OperationID,
		Tool: d.Tool, Operation: d.Operation, AgentName: d.AgentName, RunID: d.RunID, ToolCallID: d.ToolCallID,
		ArgumentDigest: d.ArgumentDigest, GateID: d.GateID, ReasonCode: d.ReasonCode, Message: d.Message,
	}
	switch {
	case d.Failure != "":
		ev.Verdict, ev.Message = VerdictFailed, d.Failure
	case !d.Allowed:
		ev.Verdict = VerdictDeny
	}
	s.decisions.publish(ev)
}

func askEvent(a controller.BrokeredApproval) DecisionEvent {
	r := a.Request
	return DecisionEvent{
		At: a.Since, Verdict: VerdictAsk, OperationID: r.OperationID, Tool: r.Tool, Operation: r.Operation,
		AgentName: r.AgentName, RunID: r.RunID, ToolCallID: r.ToolCallID, ArgumentDigest: r.ArgumentDigest,
		GateID: r.GateID, ReasonCode: r.ReasonCode, Message: r.Message, ApprovalID: a.ID,
	}
}
