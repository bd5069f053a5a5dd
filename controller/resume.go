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

// What a resumed task records for the operations a previous process left
// without a terminal record.
const (
	// ReasonInterrupted denies an operation whose gates had not reached a
	// verdict when the process that ran them stopped: the caller was never
	// told to run it.
	ReasonInterrupted = "controller.interrupted"
	// FailureOutcomeLost ends an authorized operation whose permit died
	// with the process that issued it: its gates all ran and allowed it,
	// the caller may have run it, and its outcome was never reported.
	FailureOutcomeLost = "outcome_lost"
)

// ErrResumeMismatch refuses a resume whose chain holds records of another
// task or policy than the one named.
var ErrResumeMismatch = errors.New("controller: the chain is not this task's")

// ResumeOptions names a task a previous process opened and never closed,
// exactly as that process kept it (see Task.ResumeOptions).
type ResumeOptions struct {
	TaskID   uuid.UUID
	ChainID  uuid.UUID
	PolicyID uuid.UUID
	Version  string
	OpenedAt time.Time
	Actor    *governance.ActorRef
	// Workspace is the task's resolved workspace ("" for none).
	Workspace string
}

// Resumed says what ResumeTask found on the chain.
type Resumed struct {
	// Interrupted are operations denied with ReasonInterrupted.
	Interrupted []uuid.UUID
	// OutcomeLost are authorized operations failed with FailureOutcomeLost.
	OutcomeLost []uuid.UUID
}

// ResumeOptions returns what ResumeTask needs to continue this task in
// another process; keep it durably while the task is open.
func (t *Task) ResumeOptions() ResumeOptions {
	var actor *governance.ActorRef
	if t.opts.Actor != nil {
		a := *t.opts.Actor
		actor = &a
	}
	return ResumeOptions{TaskID: t.id, ChainID: t.chain, PolicyID: t.pin.PolicyID, Version: t.pin.Version,
		OpenedAt: t.openedAt, Actor: actor, Workspace: t.workspace}
}

// ResumeTask continues, in this controller, a task another process (this
// server before a restart) opened and never closed: same task id, chain,
// policy pin and opening time, so the task closes once and is certified as
// one. Its chain is read once: the duty history is rebuilt from its
// completions, and every operation the previous process left without a
// terminal record gets one, so the task stays certifiable — denied with
// ReasonInterrupted when its gates had not decided (nothing was allowed),
// failed with FailureOutcomeLost when they had (its permit died with the
// process; whether the caller ran it is not known). Permits never survive
// a restart (DESIGN.md): nothing issued before it can be completed after.
//
// A task already open here is returned as it is. A chain that holds the
// task's TASK_CLOSED is ErrTaskClosed; records of another task or policy
// are ErrResumeMismatch.
func (c *InvocationController) ResumeTask(ctx context.Context, opts ResumeOptions) (*Task, Resumed, error) {
	if t := c.openTask(opts.TaskID); t != nil {
		return t, Resumed{}, nil
	}
	if opts.TaskID == uuid.Nil || opts.ChainID == uuid.Nil || opts.PolicyID == uuid.Nil || opts.Version == "" || opts.OpenedAt.IsZero() {
		return nil, Resumed{}, &governance.ValidationError{Field: "resume", Reason: "task id, chain id, policy pin and opening time are required"}
	}
	snap, err := c.cfg.Policies.Get(ctx, opts.PolicyID, opts.Version)
	if err != nil {
		return nil, Resumed{}, err
	}
	workspace, err := resolveWorkspace(c.cfg.PathFacts, opts.Workspace)
	if err != nil {
		return nil, Resumed{}, err
	}
	if opts.Actor != nil {
		if err := opts.Actor.Validate(); err != nil {
			return nil, Resumed{}, err
		}
	}
	recs, err := c.cfg.Evidence.Read(ctx, opts.ChainID, -1)
	if err != nil {
		return nil, Resumed{}, err
	}
	t := &Task{
		ctl: c, id: opts.TaskID, chain: opts.ChainID, digest: snap.Digest(), workspace: workspace,
		opts:     TaskOptions{PolicyID: opts.PolicyID, Version: opts.Version, Actor: opts.Actor, Workspace: opts.Workspace},
		pin:      PolicyPin{PolicyID: opts.PolicyID, Version: opts.Version},
		openedAt: opts.OpenedAt.UTC().Truncate(time.Microsecond),
	}
	left, err := t.replay(recs)
	if err != nil {
		return nil, Resumed{}, err
	}
	if existing, loaded := c.openTasks.LoadOrStore(t.id, t); loaded {
		return existing.(*Task), Resumed{}, nil
	}
	var res Resumed
	var specs []recordSpec
	now := c.now()
	for _, o := range left {
		if o.gated {
			payload := governance.NewFields(4).String("tool_id", o.tool).String("argument_digest", o.argDigest).
				Int("duration_us", now.Sub(o.startedAt).Microseconds()).String("failure", FailureOutcomeLost)
			specs = append(specs, recordSpec{typ: governance.CallableFailed, operation: uuid.NullUUID{UUID: o.id, Valid: true}, payload: payload})
			res.OutcomeLost = append(res.OutcomeLost, o.id)
			continue
		}
		payload := governance.NewFields(2).String("tool_id", o.tool).String("reason_code", ReasonInterrupted)
		specs = append(specs, recordSpec{typ: governance.OperationDenied, operation: uuid.NullUUID{UUID: o.id, Valid: true}, payload: payload})
		res.Interrupted = append(res.Interrupted, o.id)
	}
	if len(specs) > 0 {
		err := t.whileOpen(func() error {
			_, err := c.appendRecords(context.WithoutCancel(ctx), t.chain, t.pin.PolicyID, t.pin.Version, nil, nil, specs...)
			return err
		})
		if err != nil {
			c.openTasks.Delete(t.id)
			return nil, Resumed{}, &governance.GovernanceEvidenceError{Err: err}
		}
	}
	return t, res, nil
}

// unfinished is an operation of a resumed chain without a terminal record.
type unfinished struct {
	id        uuid.UUID
	tool      string
	argDigest string
	startedAt time.Time
	// gated: its gate records are on the chain (they commit in one batch
	// with the verdict), so the gates allowed it.
	gated bool
}

// replay checks that recs are this task's, rebuilds the duty history from
// them, and returns the operations left without a terminal, in start order.
func (t *Task) replay(recs []governance.EvidenceRecord) ([]unfinished, error) {
	type started struct {
		unfinished
		actor *abi.ActorRef
		done  bool
	}
	ops := map[uuid.UUID]*started{}
	var order []uuid.UUID
	for _, r := range recs {
		if r.PolicyID != t.pin.PolicyID || r.PolicyVersion != t.pin.Version {
			return nil, fmt.Errorf("%w: record %s pins policy %s@%s, the task %s@%s", ErrResumeMismatch, r.RecordID, r.PolicyID, r.PolicyVersion, t.pin.PolicyID, t.pin.Version)
		}
		var p struct {
			Task      string `json:"task_boundary_id"`
			Tool      string `json:"tool_id"`
			Digest    string `json:"argument_digest"`
			Output    string `json:"output_argument_digest"`
			ActorKind string `json:"actor_kind"`
			ActorID   string `json:"actor_id"`
		}
		if err := json.Unmarshal([]byte(r.PayloadJSON), &p); err != nil {
			return nil, fmt.Errorf("%w: record %s: %v", ErrResumeMismatch, r.RecordID, err)
		}
		if p.Task != "" && p.Task != t.id.String() {
			return nil, fmt.Errorf("%w: record %s belongs to task %s", ErrResumeMismatch, r.RecordID, p.Task)
		}
		op := r.OperationID.UUID
		switch r.RecordType {
		case governance.TaskClosed:
			return nil, fmt.Errorf("resume task %s: %w", t.id, ErrTaskClosed)
		case governance.OperationStarted:
			s := &started{unfinished: unfinished{id: op, tool: p.Tool, argDigest: p.Digest, startedAt: r.CreatedAt}}
			if p.ActorKind != "" {
				s.actor = &abi.ActorRef{Kind: p.ActorKind, ID: p.ActorID}
			}
			ops[op] = s
			order = append(order, op)
		case governance.GateEvaluated:
			if s := ops[op]; s != nil {
				s.gated = true
				if p.Output != "" { // a transform's arguments are the ones the permit carried
					s.argDigest = p.Output
				}
			}
		case governance.OperationDenied, governance.CallableFailed:
			if s := ops[op]; s != nil {
				s.done = true
			}
		case governance.CallableCompleted:
			if s := ops[op]; s != nil {
				s.done = true
				if s.actor != nil {
					t.addAssignment(abi.Assignment{Actor: *s.actor, Duty: s.tool})
				}
			}
		}
	}
	var left []unfinished
	for _, id := range order {
		if s := ops[id]; !s.done {
			left = append(left, s.unfinished)
		}
	}
	return left, nil
}
