package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// DefaultPermitLease is how long a permit may wait for its completion when
// Config.PermitLease is zero.
const DefaultPermitLease = 10 * time.Minute

// Permit is the remote form of the one-use invocation token (DESIGN.md
// "Rooms for the next wave"): Authorize returns it once every gate allowed
// the call, and Complete consumes it. It binds one operation of one task,
// one tool, and the digest of the final arguments. It lives in the
// controller's memory only, so it never survives a restart as valid.
//
// Not to be confused with a time-bounded grant (ADR-0087 D8): a grant
// excuses a deny; a permit is the receipt of an allow.
type Permit struct {
	// ID is the unguessable handle the caller presents to Complete.
	ID             string
	OperationID    uuid.UUID
	TaskBoundaryID uuid.UUID
	ChainID        uuid.UUID
	Tool           string
	// ArgumentDigest is the sha256 of Arguments.
	ArgumentDigest string
	// Arguments are the final canonical arguments the callable must be
	// given: transforms and approvers may have replaced the caller's.
	Arguments json.RawMessage
	// Rewritten says a transform gate or an approver replaced the caller's
	// arguments (ArgumentDigest is not the digest of the call's own), so an
	// edge that cannot hand the final arguments on (a hook: the agent runs
	// its own) need not parse the call's again to find out.
	Rewritten bool
	IssuedAt  time.Time
	// ExpiresAt ends the lease: Complete after it is refused.
	ExpiresAt time.Time
}

// Outcome is what the caller reports after running a permitted call: never
// the result, at most its digest.
type Outcome struct {
	// TaskBoundaryID is the task the caller completes in; it must be the
	// permit's.
	TaskBoundaryID uuid.UUID
	// Failed records CALLABLE_FAILED instead of CALLABLE_COMPLETED.
	Failed bool
	// ErrorClass names the failure ("error" when empty), 1–64 characters of
	// [a-z0-9_.-]. Only with Failed.
	ErrorClass string
	// ResultDigest is an optional sha256 (64 lowercase hex) of the result.
	ResultDigest string
	// Duration is the callable's run time as the caller measured it; zero
	// records the time since the permit was issued.
	Duration time.Duration
}

// Permit errors, matched with errors.Is on a *PermitError.
var (
	ErrPermitUnknown    = errors.New("controller: permit unknown (never issued by this controller, issued before a restart, or long expired)")
	ErrPermitUsed       = errors.New("controller: permit already completed")
	ErrPermitExpired    = errors.New("controller: permit lease expired")
	ErrPermitWrongTask  = errors.New("controller: permit belongs to another task")
	ErrPermitTaskClosed = errors.New("controller: permit's task is closed")
)

// PermitError refuses a Complete; nothing was appended.
type PermitError struct {
	Err         error
	PermitID    string
	OperationID string
}

func (e *PermitError) Error() string {
	if e.OperationID == "" {
		return fmt.Sprintf("%v: permit %q", e.Err, e.PermitID)
	}
	return fmt.Sprintf("%v: permit %q, operation %s", e.Err, e.PermitID, e.OperationID)
}

func (e *PermitError) Unwrap() error { return e.Err }

// errorClassPattern bounds what a caller may write as a failure class: a
// short token, never free text that could carry a result.
var errorClassPattern = regexp.MustCompile(`^[a-z0-9_.-]{1,64}$`)

func (o Outcome) validate() error {
	if o.ResultDigest != "" && !governance.IsDigest(o.ResultDigest) {
		return &governance.ValidationError{Field: "result_digest", Reason: "not a sha256 (64 lowercase hex characters)"}
	}
	if o.ErrorClass != "" {
		if !o.Failed {
			return &governance.ValidationError{Field: "error_class", Reason: "only a failed outcome has an error class"}
		}
		if !errorClassPattern.MatchString(o.ErrorClass) {
			return &governance.ValidationError{Field: "error_class", Reason: "want 1-64 characters of [a-z0-9_.-]"}
		}
	}
	if o.Duration < 0 {
		return &governance.ValidationError{Field: "duration", Reason: "negative"}
	}
	return nil
}

// issued is a permit and what completing it needs.
type issued struct {
	Permit
	op   *operation
	task *Task // nil when authorized without a Task
	// forgetAt is when the book drops the entry.
	forgetAt time.Time
}

// Authorize runs the first phase of one governed call: pin the policy,
// record POLICY_BOUND + OPERATION_STARTED, run every gate (transforms,
// recheck, approvals), record GATE_EVALUATED and, on a deny,
// OPERATION_DENIED. On allow it returns a permit for Complete. The tool
// need not be registered: its callable runs in the caller.
//
// Errors: *governance.GovernanceBypassError (no or mismatched context),
// *governance.GovernanceDeniedError (recorded denial),
// *governance.GovernanceEvidenceError (CallExecuted false), or a bad
// argument object.
func (c *InvocationController) Authorize(ctx context.Context, call Call, opctx *governance.OperationContext) (Permit, error) {
	if err := checkContext(call, opctx); err != nil {
		return Permit{}, err
	}
	return c.authorizeRemote(ctx, call, *opctx, nil)
}

// Authorize is the first phase of a call in this task (see
// InvocationController.Authorize). Once the task is closed it fails with
// ErrTaskClosed, and nothing more of the operation is appended.
func (t *Task) Authorize(ctx context.Context, call Call) (Permit, error) {
	opctx, err := t.Context(call.Tool)
	if err != nil {
		return Permit{}, err
	}
	return t.ctl.authorizeRemote(ctx, call, opctx, t)
}

func (c *InvocationController) authorizeRemote(ctx context.Context, call Call, opctx governance.OperationContext, t *Task) (Permit, error) {
	op := newOperation(c, call, opctx, t)
	p, err := op.authorize(ctx)
	return c.issue(op, p, err)
}

// issue ends a remote authorization: the live view is told its verdict
// (Config.Decided), and an allowed one's permit is given its id and kept
// for Complete.
func (c *InvocationController) issue(op *operation, p *issued, err error) (Permit, error) {
	if c.cfg.Decided != nil {
		c.cfg.Decided(decidedOf(op, err))
	}
	if err != nil {
		return Permit{}, err
	}
	p.op.precall = nil      // the pre-call records are written; keep the permit small
	p.ID = uuid.NewString() // NB: only a permit held between calls needs an id
	c.permits.add(p, c.lease())
	return p.Permit, nil
}

// Complete runs the second phase: it consumes the permit and records
// CALLABLE_COMPLETED, or CALLABLE_FAILED with the outcome's error class.
// A refused completion (*PermitError: unknown, used, expired, another
// task's, task closed; or a *governance.ValidationError for a bad outcome)
// appends nothing. A store failure is a *governance.GovernanceEvidenceError
// with CallExecuted true; the permit stays consumed.
func (c *InvocationController) Complete(ctx context.Context, permitID string, out Outcome) error {
	if err := out.validate(); err != nil {
		return err
	}
	p, err := c.permits.take(permitID, out.TaskBoundaryID, c.now())
	if err != nil {
		return err
	}
	if err := p.op.complete(ctx, p, out); err != nil {
		if errors.Is(err, ErrTaskClosed) {
			return &PermitError{Err: ErrPermitTaskClosed, PermitID: p.ID, OperationID: p.OperationID.String()}
		}
		return p.op.evidenceError(err, true)
	}
	return nil
}

// OpenPermits returns the permits of chain that were issued and not yet
// completed, oldest first: each names an operation without a terminal
// record, which keeps the task from being certified.
func (c *InvocationController) OpenPermits(chain uuid.UUID) []Permit {
	return c.permits.open(chain)
}

func (c *InvocationController) lease() time.Duration {
	if c.cfg.PermitLease > 0 {
		return c.cfg.PermitLease
	}
	return DefaultPermitLease
}

// permitBook holds issued permits. An entry stays after its use or expiry
// so a second attempt is told why, then is swept: the book is bounded by
// the rate of authorizations times the retention, never by the lifetime
// of the process.
type permitBook struct {
	mu   sync.Mutex
	byID map[string]*issued
	// used holds the completed permits until they are forgotten, for a
	// second attempt's ErrPermitUsed. NB: by value, not the *issued: that
	// points into its operation, which would keep the operation and what
	// it holds (~6.5 KB a call) alive for usedRetention after its use,
	// ~1.5 GB at 2,000 calls/s.
	used      map[string]usedPermit
	lastSweep time.Time
}

// usedPermit is what the book keeps of a completed permit.
type usedPermit struct {
	operationID uuid.UUID
	forgetAt    time.Time
}

// Retention after use, and after the lease ends, before an entry is
// forgotten (a later attempt then reads ErrPermitUnknown).
const (
	usedRetention    = 2 * time.Minute
	expiredRetention = 10 * time.Minute
)

func (b *permitBook) add(p *issued, lease time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byID == nil {
		b.byID, b.used = map[string]*issued{}, map[string]usedPermit{}
	}
	p.ExpiresAt = p.IssuedAt.Add(lease)
	p.forgetAt = p.ExpiresAt.Add(expiredRetention)
	b.byID[p.ID] = p
	if p.IssuedAt.Sub(b.lastSweep) > time.Second {
		b.sweep(p.IssuedAt)
	}
}

// sweep must be called with b.mu held.
func (b *permitBook) sweep(now time.Time) {
	b.lastSweep = now
	for id, p := range b.byID {
		if now.After(p.forgetAt) {
			delete(b.byID, id)
		}
	}
	for id, u := range b.used {
		if now.After(u.forgetAt) {
			delete(b.used, id)
		}
	}
}

// take checks and consumes a permit for task.
func (b *permitBook) take(id string, task uuid.UUID, now time.Time) (*issued, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u, ok := b.used[id]; ok {
		return nil, &PermitError{Err: ErrPermitUsed, PermitID: id, OperationID: u.operationID.String()}
	}
	p, ok := b.byID[id]
	if !ok {
		return nil, &PermitError{Err: ErrPermitUnknown, PermitID: id}
	}
	perr := func(e error) error { return &PermitError{Err: e, PermitID: id, OperationID: p.OperationID.String()} }
	switch {
	case task != p.TaskBoundaryID:
		return nil, perr(ErrPermitWrongTask)
	case now.After(p.ExpiresAt):
		return nil, perr(ErrPermitExpired)
	case p.task != nil && p.task.isClosed():
		return nil, perr(ErrPermitTaskClosed)
	}
	forget := now.Add(usedRetention)
	if p.forgetAt.Before(forget) {
		forget = p.forgetAt
	}
	delete(b.byID, id)
	b.used[id] = usedPermit{operationID: p.OperationID, forgetAt: forget}
	return p, nil
}

func (b *permitBook) open(chain uuid.UUID) []Permit {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Permit
	for _, p := range b.byID {
		if p.ChainID == chain {
			out = append(out, p.Permit)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].IssuedAt.Before(out[j].IssuedAt) })
	return out
}
