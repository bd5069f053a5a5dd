package controller

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// ErrAwaitingFinished refuses a second AwaitingApproval.Finish.
var ErrAwaitingFinished = errors.New("controller: awaiting authorization already finished")

// AwaitingApproval is an authorization stopped where a gate asked for an
// approval, before the approval callback was asked: what the gates before
// it decided is kept in memory, and none of the operation's records is
// written yet. Finish goes on from there exactly as Task.Authorize would
// have: it asks the callback (which may wait minutes for an approver),
// runs the remaining gates, writes the records and issues the permit.
//
// It lets a server answer a request in the request's own goroutine while
// the call is decided without an approver, and hand the authorization to
// a goroutine of its own only when it must wait, so that the wait outlives
// the request.
type AwaitingApproval struct {
	op *operation
	// output is the asking gate's answer; binding, phase and index say
	// which gate it was, started when it began (its record's duration
	// includes the wait), inDigest the arguments it saw.
	output   abi.GateOutput
	binding  governance.ExecutableGateBinding
	phase    abi.Phase
	index    int
	started  time.Time
	inDigest string
	finished atomic.Bool
}

// OperationID is the operation the authorization decides.
func (w *AwaitingApproval) OperationID() uuid.UUID { return w.op.ctx.OperationID }

// GateID is the gate that asked for the approval.
func (w *AwaitingApproval) GateID() string { return w.binding.GateID() }

// AuthorizeUntilApproval is Task.Authorize in the caller's goroutine up to
// the first approval it must ask for. Decided without one, it returns the
// permit or the error, as Authorize does, and a nil *AwaitingApproval.
// When a gate asks for an approval that the approval callback must answer
// (one approved earlier for the same arguments, or no callback, is
// decided here), it stops before asking and returns the authorization
// waiting, with a zero Permit and a nil error: call its Finish exactly
// once, normally in a goroutine of its own; until then the operation has
// no record.
func (t *Task) AuthorizeUntilApproval(ctx context.Context, call Call) (Permit, *AwaitingApproval, error) {
	opctx, err := t.Context(call.Tool)
	if err != nil {
		return Permit{}, nil, err
	}
	op := newOperation(t.ctl, call, opctx, t)
	op.holdApprovals = true
	p, err := op.authorize(ctx)
	if p == nil && err == nil {
		return Permit{}, op.awaiting, nil
	}
	permit, err := t.ctl.issue(op, p, err)
	return permit, nil, err
}

// Finish concludes the authorization: it asks the approval callback with
// ctx (the gates after the asking one, and any further approval, run in
// this goroutine with ctx too), then writes the operation's records,
// which, as in Authorize, are written to the end whatever ctx does. Its
// answer is Task.Authorize's. A second call is ErrAwaitingFinished.
func (w *AwaitingApproval) Finish(ctx context.Context) (Permit, error) {
	if !w.finished.CompareAndSwap(false, true) {
		return Permit{}, ErrAwaitingFinished
	}
	op := w.op
	op.holdApprovals = false
	op.recordCtx = uncancelable(ctx)
	out, approval := op.ask(ctx, w.binding, w.output)
	v := op.settle(w.binding, w.phase, w.inDigest, w.started, out, approval)
	if !v.denied {
		v = op.evaluateFrom(ctx, w.phase, w.index+1)
	}
	p, err := op.conclude(op.recordCtx, v)
	return op.c.issue(op, p, err)
}
