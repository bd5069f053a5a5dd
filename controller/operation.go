package controller

import (
	"context"
	"encoding/json"
	"errors"
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
	// evaluated collects the GATE_EVALUATED records of this operation.
	evaluated []recordSpec
	// unsynced holds records applied but not yet durable (recordUnsynced):
	// the next append makes them durable and projects them first.
	unsynced []governance.EvidenceRecord
	// approvedArgs maps a gate id to the digest of arguments an approver
	// supplied for it; recheck is set once an approver replaced arguments.
	approvedArgs map[string]string
	recheck      bool
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
}

// idTexts returns the operation's chain and operation ids as text.
func (op *operation) idTexts() (chain, operation string) {
	if op.opText == "" {
		op.chainText, op.opText = op.ctx.ChainID.String(), op.ctx.OperationID.String()
	}
	return op.chainText, op.opText
}

// verdict is the outcome of the gate phases.
type verdict struct {
	denied  bool
	gateID  string
	reason  string
	message string
	phase   abi.Phase
}

func (op *operation) opID() uuid.NullUUID {
	return uuid.NullUUID{UUID: op.ctx.OperationID, Valid: true}
}

func newOperation(c *InvocationController, call Call, opctx governance.OperationContext, t *Task) *operation {
	op := &operation{c: c, call: call, ctx: opctx, task: t, approvedArgs: map[string]string{}}
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
	_, err := op.c.appendRecords(ctx, op.ctx.ChainID, op.ctx.PolicyID, op.ctx.PolicyVersion, op.unsynced, specs...)
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
			op.unsynced = recs
		}
		return err
	}
	return op.whileTaskOpen(apply)
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
	args, err := governance.ParseArguments(op.call.Arguments)
	if err != nil {
		return nil, err
	}
	op.args, op.inputDigest = args, args.Digest
	// Once the operation starts, its records are written to the end even if
	// the caller cancels: an operation without its terminal record cannot
	// be certified. Gates and the callable still see the caller's context.
	ctx := context.WithoutCancel(callerCtx)

	started := recordSpec{typ: governance.OperationStarted, operation: op.opID(), payload: op.startedPayload()}
	reason, err := op.pinPolicy(ctx)
	if err != nil {
		return nil, op.evidenceError(err, false)
	}
	if reason != "" {
		v := verdict{denied: true, reason: reason}
		if err := op.record(ctx, started, op.deniedSpec(v)); err != nil {
			return nil, op.evidenceError(err, false)
		}
		return nil, op.deniedError(v)
	}
	bound := recordSpec{typ: governance.PolicyBound, operation: op.opID(), payload: governance.NewFields(4).
		String("policy_digest", op.snap.Digest()).String("tool_id", op.call.Tool).
		UUID("task_boundary_id", op.ctx.TaskBoundaryID).Int("gate_count", int64(op.snap.NumGateBindings())),
	}
	// POLICY_BOUND + OPERATION_STARTED become durable with the gate batch
	// below (one WAL sync for both), before any verdict is acted on.
	if err := op.recordUnsynced(ctx, bound, started); err != nil {
		return nil, op.evidenceError(err, false)
	}

	// The gate records and, for a denial, OPERATION_DENIED commit in one
	// batch before the verdict is acted on: one durable write, not one per
	// gate.
	v := op.evaluate(callerCtx)
	if v.denied {
		op.evaluated = append(op.evaluated, op.deniedSpec(v))
	}
	if err := op.record(ctx, op.evaluated...); err != nil {
		return nil, op.evidenceError(err, false)
	}
	if v.denied {
		return nil, op.deniedError(v)
	}
	return &issued{
		Permit: Permit{
			ID: uuid.NewString(), OperationID: op.ctx.OperationID, TaskBoundaryID: op.ctx.TaskBoundaryID,
			ChainID: op.ctx.ChainID, Tool: op.call.Tool, ArgumentDigest: op.args.Digest,
			Arguments: json.RawMessage(op.args.Canonical), IssuedAt: op.c.now(), Rewritten: op.args.Digest != op.inputDigest,
		},
		op: op, task: op.task,
	}, nil
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
	if err := op.record(context.WithoutCancel(ctx), recordSpec{typ: typ, operation: op.opID(), payload: payload}); err != nil {
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
	var nf *governance.PolicyNotFoundError
	switch {
	case errors.Is(err, governance.ErrStoreUnavailable):
		return "", err
	case errors.As(err, &nf):
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

func (op *operation) startedPayload() *governance.Fields {
	p := governance.NewFields(7).String("tool_id", op.call.Tool).String("argument_digest", op.args.Digest).
		Value("fields", op.args.FieldNames()).UUID("task_boundary_id", op.ctx.TaskBoundaryID)
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
	p.used = true
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
