package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// Decision is what an authorization answers.
type Decision string

// Decisions an authorization answers.
const (
	DecisionAllow   Decision = "allow"
	DecisionDeny    Decision = "deny"
	DecisionPending Decision = "pending_approval"
)

// Denial is a recorded deny: the operation, the gate that denied and why.
type Denial struct {
	OperationID string
	GateID      string
	ReasonCode  string
	Message     string
}

// AuthorizeResult is the answer: a permit, a denial, or (when a gate asked
// for approval and the wait ran out) the ids to wait on.
type AuthorizeResult struct {
	Decision Decision
	Permit   *controller.Permit
	Denial   *Denial
	// AuthorizationID names a pending authorization (Wait); ApprovalID the
	// approval an approver resolves.
	AuthorizationID string
	ApprovalID      string
}

// Authorize runs the first phase of a governed call in task taskID. wait
// is how long the request may wait for an approver when a gate asks for
// approval; zero answers pending at once. A require_approval parks the
// authorization with the broker: the answer is then pending, with an
// authorization id for Wait and the approval id an approver resolves.
func (s *Service) Authorize(ctx context.Context, taskID uuid.UUID, call controller.Call, wait time.Duration) (AuthorizeResult, error) {
	if call.Tool == "" {
		return AuthorizeResult{}, failf(CodeInvalidRequest, "tool is required")
	}
	t, err := s.task(taskID)
	if err != nil {
		return AuthorizeResult{}, err
	}
	// A call decided without an approver is decided in the request's own
	// goroutine: a goroutine of its own, and the hand-off of its answer,
	// wake an idle thread twice a call (tens of cpu-µs; docs/performance.md,
	// "Fifth pass (s9-auth)"). It is
	// detached from the request's cancellation all the same: a client
	// that goes away does not stop it halfway (its records are written to
	// the end, and its permit waits for a completion as any other).
	inline := ctx
	if ctx.Done() != nil {
		inline = context.WithoutCancel(ctx)
	}
	p, awaiting, err := t.AuthorizeUntilApproval(inline, call)
	if awaiting == nil {
		return resultOf(p, err)
	}
	// A gate asked for an approval: the authorization waits for an
	// approver in a goroutine of its own, so that it outlives the request
	// (its records are written to the end whatever the client does). Its
	// wait for an approver has its own bound (approve).
	a := &authorization{done: make(chan struct{}), pending: make(chan struct{})}
	a.ctx = detached{parent: ctx, a: a}
	go func() {
		p, err := awaiting.Finish(&a.ctx)
		a.finish(p, err)
	}()
	return s.await(ctx, a, wait)
}

// detached is an authorization's context: the request's values and its
// authorization (authzKey), without the request's cancellation or
// deadline. It is context.WithValue(context.WithoutCancel(parent), ...)
// without an allocation of its own (a field of the authorization).
type detached struct {
	parent context.Context
	a      *authorization
}

func (*detached) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*detached) Done() <-chan struct{}       { return nil }
func (*detached) Err() error                  { return nil }
func (d *detached) Value(key any) any {
	if _, ok := key.(authzKey); ok {
		return d.a
	}
	return d.parent.Value(key)
}

func (d *detached) String() string { return "service.detached" }

// Wait answers a pending authorization: its result once decided, or
// pending again after wait.
func (s *Service) Wait(ctx context.Context, authorizationID string, wait time.Duration) (AuthorizeResult, error) {
	a := s.authz.get(authorizationID)
	if a == nil {
		return AuthorizeResult{}, failf(CodeAuthzNotFound, "authorization %q is not waiting here (unknown, already answered, or from before a restart)", authorizationID)
	}
	return s.await(ctx, a, wait)
}

func (s *Service) await(ctx context.Context, a *authorization, wait time.Duration) (AuthorizeResult, error) {
	var timeout <-chan time.Time
	pending := a.pending
	for {
		select {
		case <-a.done:
			s.authz.drop(a)
			return a.result()
		case <-pending:
			if wait <= 0 {
				return s.authz.pendingResult(a), nil
			}
			if timeout == nil {
				timer := time.NewTimer(wait)
				defer timer.Stop()
				timeout = timer.C
			}
			pending = nil // the approval id is known; wait for the end
		case <-timeout:
			return s.authz.pendingResult(a), nil
		case <-ctx.Done():
			return s.authz.pendingResult(a), nil
		}
	}
}

// authzKey carries an authorization through the controller to the
// approval callback.
type authzKey struct{}

// authorization is one authorize that waits for an approver (or did).
type authorization struct {
	// id is minted, and the authorization listed for Wait, only when an
	// answer says pending (authorizations.pendingResult): an authorization
	// decided within its request is never looked up. Guarded by
	// authorizations.mu.
	id      string
	ctx     detached // the context it runs in
	done    chan struct{}
	pending chan struct{} // closed once a gate asked for approval
	asked   sync.Once

	mu         sync.Mutex
	approvalID string
	permit     controller.Permit
	err        error
	finished   time.Time
}

func (a *authorization) finish(p controller.Permit, err error) {
	a.mu.Lock()
	a.permit, a.err, a.finished = p, err, time.Now()
	a.mu.Unlock()
	close(a.done)
}

func (a *authorization) result() (AuthorizeResult, error) {
	a.mu.Lock()
	p, err := a.permit, a.err
	a.mu.Unlock()
	return resultOf(p, err)
}

// resultOf is the answer to an authorization that ended with p or err.
func resultOf(p controller.Permit, err error) (AuthorizeResult, error) {
	if err == nil {
		return AuthorizeResult{Decision: DecisionAllow, Permit: &p}, nil
	}
	var de *governance.GovernanceDeniedError
	var ee *governance.GovernanceEvidenceError
	switch {
	case errors.As(err, &de):
		return AuthorizeResult{Decision: DecisionDeny, Denial: &Denial{OperationID: de.OperationID, GateID: de.GateID, ReasonCode: de.ReasonCode, Message: de.Message}}, nil
	case errors.Is(err, controller.ErrTaskClosed):
		return AuthorizeResult{}, fail(CodeTaskClosed, err)
	case errors.As(err, &ee):
		refusal := evidenceFailure(err)
		refusal.Message = errUnavailable.Error() + ": " + ee.Error()
		return AuthorizeResult{}, refusal
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return AuthorizeResult{}, fail(CodeUnavailable, err)
	}
	// What remains is the call's own: arguments that are not a JSON object.
	return AuthorizeResult{}, fail(CodeInvalidRequest, err)
}

// authorizations holds the authorizations a client may still ask about.
type authorizations struct {
	mu        sync.Mutex
	byID      map[string]*authorization
	byOp      map[uuid.UUID]*authorization // waiting for an approval
	lastSweep time.Time
}

// retainAnswered is how long an answered authorization nobody collected
// is kept.
const retainAnswered = 15 * time.Minute

func (b *authorizations) init() { b.byID = map[string]*authorization{} }

// pendingResult answers pending for a: its id (minted and listed for Wait
// the first time) and its approval's.
func (b *authorizations) pendingResult(a *authorization) AuthorizeResult {
	b.mu.Lock()
	if a.id == "" {
		a.id = uuid.NewString()
		b.byID[a.id] = a
		b.sweepLocked()
	}
	id := a.id
	b.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	return AuthorizeResult{Decision: DecisionPending, AuthorizationID: id, ApprovalID: a.approvalID}
}

// sweepLocked forgets, at most once a second, the answered authorizations
// nobody collected within retainAnswered.
func (b *authorizations) sweepLocked() {
	now := time.Now()
	if now.Sub(b.lastSweep) > time.Second {
		b.lastSweep = now
		for id, old := range b.byID {
			old.mu.Lock()
			stale := !old.finished.IsZero() && now.Sub(old.finished) > retainAnswered
			old.mu.Unlock()
			if stale {
				delete(b.byID, id)
			}
		}
	}
}

func (b *authorizations) get(id string) *authorization {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byID[id]
}

// drop forgets an answered authorization (one never listed costs nothing).
func (b *authorizations) drop(a *authorization) {
	b.mu.Lock()
	if a.id != "" {
		delete(b.byID, a.id)
	}
	b.mu.Unlock()
}

// CompleteRequest reports the outcome of a permitted call.
type CompleteRequest struct {
	PermitID     string
	Failed       bool
	ErrorClass   string
	ResultDigest string
	Duration     time.Duration
}

// Complete records the outcome of a permitted call in task taskID.
func (s *Service) Complete(ctx context.Context, taskID uuid.UUID, req CompleteRequest) error {
	if req.PermitID == "" {
		return failf(CodeInvalidRequest, "permit_id is required")
	}
	err := s.ctl.Complete(ctx, req.PermitID, controller.Outcome{
		TaskBoundaryID: taskID, Failed: req.Failed, ErrorClass: req.ErrorClass, ResultDigest: req.ResultDigest, Duration: req.Duration,
	})
	var ve *governance.ValidationError
	var ee *governance.GovernanceEvidenceError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, controller.ErrPermitUnknown):
		return fail(CodePermitUnknown, err)
	case errors.Is(err, controller.ErrPermitUsed):
		return fail(CodePermitUsed, err)
	case errors.Is(err, controller.ErrPermitExpired):
		return fail(CodePermitExpired, err)
	case errors.Is(err, controller.ErrPermitWrongTask):
		return fail(CodePermitWrongTask, err)
	case errors.Is(err, controller.ErrPermitTaskClosed):
		return fail(CodeTaskClosed, err)
	case errors.As(err, &ve):
		return fail(CodeInvalidRequest, err)
	case errors.As(err, &ee):
		return evidenceFailure(err)
	}
	return err
}

func (b *authorizations) watch(op uuid.UUID, a *authorization) {
	b.mu.Lock()
	if b.byOp == nil {
		b.byOp = map[uuid.UUID]*authorization{}
	}
	b.byOp[op] = a
	b.mu.Unlock()
}

func (b *authorizations) unwatch(op uuid.UUID) {
	b.mu.Lock()
	delete(b.byOp, op)
	b.mu.Unlock()
}

func (b *authorizations) watching(op uuid.UUID) *authorization {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byOp[op]
}
