package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// operation is the state of one governed call; it is never shared.
type operation struct {
	c    *InvocationController
	task *Task // set when the operation runs through a Task
	call Call
	ctx  governance.OperationContext
	snap governance.PolicySnapshot
	args governance.Arguments
	// inputDigest is the digest of the caller's own arguments.
	inputDigest string
	// precall collects the records before the callable that are not yet
	// applied (POLICY_BOUND, OPERATION_STARTED, GATE_EVALUATED, a denial),
	// in precallInline while they fit (three gates and a denial do):
	// authorize appends them in one synced batch, one commit for all.
	precall       []recordSpec
	precallInline [8]recordSpec
	// recordCtx is the context records are written with (the caller's,
	// without its cancellation); precallErr is a failed early application
	// of precall (applyPrecall).
	recordCtx  context.Context
	precallErr error
	// unsynced holds records applied but not yet durable (recordUnsynced):
	// the next append makes them durable and projects them first.
	unsynced []governance.EvidenceRecord
	// approvedArgs maps a gate id to the digest of arguments an approver
	// supplied for it; recheck is set once an approver replaced arguments.
	approvedArgs map[string]string
	recheck      bool
	// holdApprovals stops the operation where a gate asks for an approval,
	// before the approval callback is asked (Task.AuthorizeUntilApproval);
	// awaiting then says where it stopped.
	holdApprovals bool
	awaiting      *AwaitingApproval
	// workspace is the task's resolved workspace root ("" for none).
	workspace string
	// home is the open task the operation belongs to (nil outside one): its
	// duty history goes to the gates, and a completion extends it.
	home *Task
	// cwd and facts are resolved once per argument version.
	cwd        string
	facts      []abi.PathFact
	factsOf    string
	factsError error
	// chainText and opText are the ids as every gate input carries them,
	// formatted once an operation rather than once a gate (idTexts).
	chainText, opText string
	// permit is what authorize issues on allow (at most once an operation).
	permit issued
	// records holds the records of the operation's latest synced batch
	// (its five pre-call records with three gates, then its completion):
	// each batch is projected before the next is written.
	records [6]governance.EvidenceRecord
	// gateActors are the gates' copies of the actor (gateActor), inline
	// for an operation's first few gates.
	gateActors [4]abi.ActorRef
	usedActors int
}

// gateActor returns a copy of the operation's actor for one gate's input
// (nil without an actor): each gate gets its own, so a gate cannot change
// what the next one sees.
func (op *operation) gateActor() *abi.ActorRef {
	a, ok := op.ctx.ActorValue()
	if !ok {
		return nil
	}
	if op.usedActors == len(op.gateActors) {
		return &abi.ActorRef{Kind: a.Kind, ID: a.ID}
	}
	// NB: written into the slot, never through a local whose address
	// escapes on the other branch: that local would be allocated on every
	// call, inline slot or not.
	slot := &op.gateActors[op.usedActors]
	op.usedActors++
	*slot = abi.ActorRef{Kind: a.Kind, ID: a.ID}
	return slot
}

// uncancelable is ctx without its cancellation, as context.WithoutCancel,
// but ctx itself when it can never be cancelled (a nil Done): records are
// written to the end even if the caller cancels.
func uncancelable(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// idTexts returns the operation's chain and operation ids as text.
func (op *operation) idTexts() (chain, operation string) {
	if op.opText == "" {
		// NB: one string for both, one allocation.
		var text [72]byte
		both := string(governance.AppendUUID(governance.AppendUUID(text[:0], op.ctx.ChainID), op.ctx.OperationID))
		op.chainText, op.opText = both[:36], both[36:]
	}
	return op.chainText, op.opText
}

// verdict is the outcome of the gate phases.
type verdict struct {
	denied bool
	// held: stopped before asking for an approval (holdApprovals).
	held    bool
	gateID  string
	reason  string
	message string
	phase   abi.Phase
}

func (op *operation) opID() uuid.NullUUID {
	return uuid.NullUUID{UUID: op.ctx.OperationID, Valid: true}
}

func newOperation(c *InvocationController, call Call, opctx governance.OperationContext, t *Task) *operation {
	op := &operation{c: c, call: call, ctx: opctx, task: t}
	op.precall = op.precallInline[:0]
	from := t
	if from == nil {
		from = c.openTask(opctx.TaskBoundaryID)
	}
	if from != nil {
		op.home = from
		op.workspace = from.workspace
		op.call = call.withContext(from.opts.Context)
	}
	return op
}

// record appends specs to the operation's chain; in a task, only while the
// task is open (ErrTaskClosed otherwise, nothing appended).
func (op *operation) record(ctx context.Context, specs ...recordSpec) error {
	return op.whileTaskOpen(func() error { return op.append(ctx, specs) })
}

// whileTaskOpen runs apply while the operation's task is open (a task's
// records never follow its TASK_CLOSED); outside a task, just runs it.
func (op *operation) whileTaskOpen(apply func() error) error {
	if op.task != nil {
		return op.task.whileOpen(apply)
	}
	return apply()
}

func (op *operation) append(ctx context.Context, specs []recordSpec) error {
	_, err := op.c.appendRecords(ctx, op.ctx.ChainID, op.ctx.PolicyID, op.ctx.PolicyVersion, op.records[:0], op.unsynced, specs...)
	if err == nil {
		op.unsynced = nil
	}
	return err
}

// recordUnsynced is record whose records, when the store can, become
// durable with the operation's next record call instead of their own sync
// (evidence.UnsyncedAppender): that call must come before anything acts on
// them.
func (op *operation) recordUnsynced(ctx context.Context, specs ...recordSpec) error {
	apply := func() error {
		recs, unsynced, err := op.c.appendRecordsUnsynced(ctx, op.ctx.ChainID, op.ctx.PolicyID, op.ctx.PolicyVersion, specs)
		if unsynced {
			op.unsynced = append(op.unsynced, recs...)
		}
		return err
	}
	return op.whileTaskOpen(apply)
}

// applyPrecall applies the pre-call records collected so far without a
// sync of their own (recordUnsynced): authorize's synced batch makes them
// durable with the rest. A failure is kept in precallErr, which authorize
// reports as an evidence error before acting on any verdict.
func (op *operation) applyPrecall() {
	if len(op.precall) == 0 || op.precallErr != nil {
		return
	}
	op.precallErr = op.recordUnsynced(op.recordCtx, op.precall...)
	op.precall = op.precall[:0]
}

// evidenceError wraps a failed append; a closed task is reported as such.
func (op *operation) evidenceError(err error, executed bool) error {
	if errors.Is(err, ErrTaskClosed) {
		return err
	}
	return &governance.GovernanceEvidenceError{OperationID: op.ctx.OperationID.String(), CallExecuted: executed, Err: err}
}

// authorize is the first phase of the sequence: everything before the
// callable. On allow it returns the permit that complete consumes; the
// caller decides where the callable runs.
func (op *operation) authorize(callerCtx context.Context) (*issued, error) {
	if err := callerCtx.Err(); err != nil {
		return nil, err
	}
	args, err := op.call.arguments()
	if err != nil {
		return nil, err
	}
	op.args, op.inputDigest = args, args.Digest
	// Once the operation starts, its records are written to the end even if
	// the caller cancels: an operation without its terminal record cannot
	// be certified. Gates and the callable still see the caller's context.
	ctx := uncancelable(callerCtx)
	op.recordCtx = ctx

	started := recordSpec{typ: governance.OperationStarted, operation: op.opID(), payload: op.startedPayload()}
	reason, err := op.pinPolicy(ctx)
	if err != nil {
		return nil, op.evidenceError(err, false)
	}
	early := verdict{denied: reason != "", reason: reason}
	if reason == "" && len(args.Canonical) > abi.MaxArgumentsBytes {
		// Refused before any gate: a gate must never fail on an input the
		// front end accepted (the one limit, abi.MaxArgumentsBytes).
		early = verdict{denied: true, reason: ReasonTooLarge, message: fmt.Sprintf(
			"govhost refused this %s call: its arguments are %.1f MiB, over the %d MiB a governed call may carry (abi.MaxArgumentsBytes)",
			op.call.Tool, float64(len(args.Canonical))/(1<<20), abi.MaxArgumentsBytes>>20)}
	}
	if early.denied {
		if err := op.record(ctx, started, op.deniedSpec(early)); err != nil {
			return nil, op.evidenceError(err, false)
		}
		return nil, op.deniedError(early)
	}
	bound := recordSpec{typ: governance.PolicyBound, operation: op.opID(), payload: governance.NewFields(4).
		String("policy_digest", op.snap.Digest()).String("tool_id", op.call.Tool).
		UUID("task_boundary_id", op.ctx.TaskBoundaryID).Int("gate_count", int64(op.snap.NumGateBindings())),
	}
	// POLICY_BOUND, OPERATION_STARTED, the gate records and, for a denial,
	// OPERATION_DENIED commit in one synced batch before the verdict is
	// acted on: one durable write for every record before the callable
	// (ADR-0087 D3), not one for the operation's start and one for its
	// gates. A wait on an approver applies the records so far first
	// (applyPrecall), so a chain read meanwhile shows the operation.
	op.precall = append(op.precall, bound, started)
	v := op.evaluate(callerCtx)
	if v.held {
		// NB: neither a permit nor an error: the operation waits in
		// op.awaiting, whose Finish concludes it.
		return nil, nil
	}
	return op.conclude(ctx, v)
}

// conclude ends the first phase on the gates' verdict: the pre-call
// records (and a denial's) in one synced batch, then the permit or the
// denial. ctx is the records' context.
func (op *operation) conclude(ctx context.Context, v verdict) (*issued, error) {
	if op.precallErr != nil {
		return nil, op.evidenceError(op.precallErr, false)
	}
	if v.denied {
		op.precall = append(op.precall, op.deniedSpec(v))
	}
	if err := op.record(ctx, op.precall...); err != nil {
		return nil, op.evidenceError(err, false)
	}
	if v.denied {
		return nil, op.deniedError(v)
	}
	// NB: the permit lives in the operation, which it points to anyway:
	// one allocation a call less.
	op.permit = issued{
		Permit: Permit{
			OperationID: op.ctx.OperationID, TaskBoundaryID: op.ctx.TaskBoundaryID,
			ChainID: op.ctx.ChainID, Tool: op.call.Tool, ArgumentDigest: op.args.Digest,
			Arguments: json.RawMessage(op.args.Canonical), IssuedAt: op.c.now(), Rewritten: op.args.Digest != op.inputDigest,
		},
		op: op, task: op.task,
	}
	return &op.permit, nil
}

// complete is the second phase: the outcome record of a consumed permit.
// Arguments are never recorded, only their digest.
func (op *operation) complete(ctx context.Context, p *issued, out Outcome) error {
	dur := out.Duration
	if dur == 0 {
		dur = op.c.now().Sub(p.IssuedAt)
	}
	payload := governance.NewFields(5).String("tool_id", p.Tool).String("argument_digest", p.ArgumentDigest).
		Int("duration_us", dur.Microseconds())
	if out.ResultDigest != "" {
		payload.String("result_digest", out.ResultDigest)
	}
	typ := governance.CallableCompleted
	if out.Failed {
		typ = governance.CallableFailed
		failure := out.ErrorClass
		if failure == "" {
			failure = "error"
		}
		payload.String("failure", failure)
	}
	if err := op.record(uncancelable(ctx), recordSpec{typ: typ, operation: op.opID(), payload: payload}); err != nil {
		return err
	}
	if a, ok := op.ctx.ActorValue(); ok && !out.Failed && op.home != nil {
		// Only a committed completion is a performed duty.
		op.home.assign(abi.Assignment{Actor: abi.ActorRef{Kind: a.Kind, ID: a.ID}, Duty: p.Tool})
	}
	return nil
}

// pinPolicy loads the exact snapshot the context pins and checks its
// digest; it returns a reason code when the operation must be denied. A
// store that could not answer (governance.ErrStoreUnavailable) decided
// nothing: that is an error, never a denial reason, so the caller sees the
// outage (GovernanceEvidenceError) rather than "policy.invalid".
func (op *operation) pinPolicy(ctx context.Context) (string, error) {
	snap, err := op.c.cfg.Policies.Get(ctx, op.ctx.PolicyID, op.ctx.PolicyVersion)
	switch {
	case errors.Is(err, governance.ErrStoreUnavailable):
		return "", err
	case isPolicyNotFound(err):
		return ReasonPolicyNotFound, nil
	case err != nil:
		return ReasonPolicyInvalid, nil
	case snap.Digest() != op.ctx.PolicyDigest:
		return ReasonPolicyMismatch, nil
	case !snap.IsActive():
		return ReasonPolicyInvalid, nil
	}
	op.snap = snap
	return "", nil
}

// isPolicyNotFound is errors.As for a *governance.PolicyNotFoundError, in
// a function of its own so that its target is allocated only when there
// is an error to look into.
func isPolicyNotFound(err error) bool {
	if err == nil {
		return false
	}
	var nf *governance.PolicyNotFoundError
	return errors.As(err, &nf)
}

func (op *operation) startedPayload() *governance.Fields {
	p := governance.NewFields(7).String("tool_id", op.call.Tool).String("argument_digest", op.args.Digest).
		Strings("fields", op.args.FieldNames()).UUID("task_boundary_id", op.ctx.TaskBoundaryID)
	if op.ctx.ParentOperationID.Valid {
		p.UUID("parent_operation_id", op.ctx.ParentOperationID.UUID)
	}
	if a, ok := op.ctx.ActorValue(); ok {
		p.String("actor_kind", a.Kind).String("actor_id", a.ID)
	}
	return p
}

func (op *operation) deniedSpec(v verdict) recordSpec {
	p := governance.NewFields(4).String("tool_id", op.call.Tool).String("reason_code", v.reason)
	if v.gateID != "" {
		p.String("gate_id", v.gateID).String("phase", string(v.phase))
	}
	return recordSpec{typ: governance.OperationDenied, operation: op.opID(), payload: p}
}

func (op *operation) deniedError(v verdict) error {
	return &governance.GovernanceDeniedError{
		Function: op.call.Tool, OperationID: op.ctx.OperationID.String(),
		GateID: v.gateID, ReasonCode: v.reason, Message: v.message,
	}
}

// callTool runs the permitted callable in process, once, through a one-use
// token, and completes the permit with its outcome (ADR-0087 D3's failure
// semantics).
func (op *operation) callTool(callerCtx context.Context, m *Manager, p *issued) (any, error) {
	final, err := op.args.ForCallable()
	if err != nil {
		return nil, err
	}
	tok := &InvocationToken{ctl: op.c, toolID: op.call.Tool, operationID: op.ctx.OperationID}
	start := time.Now()
	res, callErr := m.CallTool(callerCtx, op.call.Tool, tok, final)
	out := Outcome{TaskBoundaryID: p.TaskBoundaryID, Duration: time.Since(start)}
	if callErr == nil {
		if err := op.complete(callerCtx, p, out); err != nil {
			return nil, op.evidenceError(err, true)
		}
		return res, nil
	}
	out.Failed, out.ErrorClass = true, "error"
	var pe *PanicError
	if errors.As(callErr, &pe) {
		out.ErrorClass = "panic"
	}
	if err := op.complete(callerCtx, p, out); err != nil {
		return nil, &governance.OutcomeEvidenceError{OperationID: op.ctx.OperationID.String(), CallErr: callErr, StoreErr: err}
	}
	return nil, callErr
}
