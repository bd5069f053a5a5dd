package controller

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// ErrTaskClosed refuses a second Close, or an operation context asked of a
// closed task.
var ErrTaskClosed = errors.New("controller: task already closed")

// TaskOptions opens a task boundary pinned to one exact policy version.
type TaskOptions struct {
	PolicyID  uuid.UUID
	Version   string
	Actor     *governance.ActorRef
	SessionID uuid.NullUUID
	BranchID  uuid.NullUUID
	// Workspace is the task's workspace root: the project the agent works
	// in (a remote agent's session cwd). It must be absolute; OpenTask
	// resolves it once with the controller's PathFacts resolver, as the
	// originals resolve their roots when a policy is built, and every gate
	// of the task's operations sees it as abi.GateInput.Workspace — so one
	// policy ("$workspace" in pathguard) serves every project. Empty: the
	// task has none, and a gate that needs one denies.
	Workspace string
	// Context is the correlation every call of the task carries (run and
	// agent ids, app metadata), merged into each call's own request
	// fields, the call winning (AgentLane: "request metadata winning on key
	// conflicts"). Gates and approvers see the merged values.
	Context ExecutionContext
}

// Task is an open task boundary: one evidence chain, one policy pin. Its
// operations get their contexts from Context. Close it exactly once; a task
// never closed can never be certified (DESIGN.md "Task boundary facade").
type Task struct {
	ctl      *InvocationController
	id       uuid.UUID
	chain    uuid.UUID
	pin      PolicyPin
	digest   string
	opts     TaskOptions
	openedAt time.Time
	// workspace is opts.Workspace resolved.
	workspace string

	// history is the task's duty history (separation of duties): which
	// actor completed which tool, each pair once, in the order first
	// committed. Separation of duties asks only whether an actor performed
	// a duty; keeping every repetition made each call of a long session
	// copy and encode all the calls before it (O(n²) a task). It holds
	// one entry per actor and tool, so a scan finds a repeat.
	histMu  sync.Mutex
	history []abi.Assignment

	// mu orders the task's appends against Close: an operation's append
	// holds it shared, Close exclusively, so no record of the task's
	// operations follows its TASK_CLOSED.
	mu     sync.RWMutex
	closed bool
}

// OpenTask pins the exact, active policy version and opens a boundary with
// a new task id and chain. Nothing is recorded until the first operation.
func (c *InvocationController) OpenTask(ctx context.Context, opts TaskOptions) (*Task, error) {
	snap, err := c.cfg.Policies.Get(ctx, opts.PolicyID, opts.Version)
	if err != nil {
		return nil, err
	}
	if !snap.IsActive() {
		return nil, &governance.ValidationError{Field: "version", Reason: "policy version is not active"}
	}
	if opts.Actor != nil {
		if err := opts.Actor.Validate(); err != nil {
			return nil, err
		}
		a := *opts.Actor
		opts.Actor = &a
	}
	workspace, err := resolveWorkspace(c.cfg.PathFacts, opts.Workspace)
	if err != nil {
		return nil, err
	}
	t := &Task{
		ctl: c, id: uuid.New(), chain: uuid.New(), digest: snap.Digest(), opts: opts, workspace: workspace,
		pin: PolicyPin{PolicyID: opts.PolicyID, Version: opts.Version}, openedAt: c.now().UTC().Truncate(time.Microsecond),
	}
	if len(opts.Context.Metadata) > 0 {
		md := make(map[string]string, len(opts.Context.Metadata))
		for k, v := range opts.Context.Metadata {
			md[k] = v
		}
		t.opts.Context.Metadata = md
	}
	c.openTasks.Store(t.id, t)
	return t, nil
}

// resolveWorkspace checks and resolves a task's workspace root ("" stays
// ""). Without a resolver it is only cleaned.
func resolveWorkspace(resolve PathResolver, ws string) (string, error) {
	if ws == "" {
		return "", nil
	}
	if !path.IsAbs(ws) || strings.IndexByte(ws, 0) >= 0 {
		return "", &governance.ValidationError{Field: "workspace", Reason: fmt.Sprintf("must be an absolute path, got %q", ws)}
	}
	if resolve == nil {
		return path.Clean(ws), nil
	}
	resolved, _, err := resolve(ws, nil, nil, nil)
	if err != nil {
		return "", &governance.ValidationError{Field: "workspace", Reason: "cannot be resolved: " + err.Error()}
	}
	return resolved, nil
}

// openTask returns a task open in this controller, or nil.
func (c *InvocationController) openTask(id uuid.UUID) *Task {
	if t, ok := c.openTasks.Load(id); ok {
		return t.(*Task)
	}
	return nil
}

// ID returns the task boundary id, stable from open.
func (t *Task) ID() uuid.UUID { return t.id }

// ChainID returns the task's evidence chain.
func (t *Task) ChainID() uuid.UUID { return t.chain }

// Pin returns the task's policy pin.
func (t *Task) Pin() PolicyPin { return t.pin }

// Workspace returns the task's resolved workspace root ("" for none).
func (t *Task) Workspace() string { return t.workspace }

// Actor returns the actor the task was opened for (nil for none).
func (t *Task) Actor() *governance.ActorRef { return t.opts.Actor }

// Context returns a fresh operation context for one call of toolID in this
// task.
func (t *Task) Context(toolID string) (governance.OperationContext, error) {
	if t.isClosed() {
		return governance.OperationContext{}, ErrTaskClosed
	}
	return governance.NewOperationContext(governance.OperationContext{
		OperationID: uuid.New(), ChainID: t.chain, TaskBoundaryID: t.id,
		SessionID: t.opts.SessionID, BranchID: t.opts.BranchID, Actor: t.opts.Actor,
		ToolID: toolID, PolicyID: t.pin.PolicyID, PolicyVersion: t.pin.Version, PolicyDigest: t.digest,
		StartedAt: t.ctl.now(),
	})
}

func (t *Task) isClosed() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.closed
}

// whileOpen runs fn (an append of one of the task's operations) unless the
// task is closed, and keeps Close waiting until fn returns.
func (t *Task) whileOpen(fn func() error) error {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return ErrTaskClosed
	}
	return fn()
}

// Close appends TASK_CLOSED once and returns the closed boundary, from
// which a certificate can be minted. A second Close is ErrTaskClosed.
func (t *Task) Close(ctx context.Context) (governance.ClosedTaskBoundary, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return governance.ClosedTaskBoundary{}, ErrTaskClosed
	}
	closedAt := t.ctl.now().UTC().Truncate(time.Microsecond)
	b, err := governance.NewClosedTaskBoundary(governance.ClosedTaskBoundary{
		TaskBoundaryID: t.id, ChainID: t.chain, PolicyID: t.pin.PolicyID, PolicyVersion: t.pin.Version,
		OpenedAt: t.openedAt, ClosedAt: closedAt,
	})
	if err != nil {
		return governance.ClosedTaskBoundary{}, err
	}
	_, err = t.ctl.appendRecords(context.WithoutCancel(ctx), t.chain, t.pin.PolicyID, t.pin.Version, nil, nil, recordSpec{
		typ: governance.TaskClosed,
		payload: map[string]any{
			"task_boundary_id": t.id, "policy_digest": t.digest, "opened_at": b.OpenedAt, "closed_at": b.ClosedAt,
		},
	})
	if err != nil {
		return governance.ClosedTaskBoundary{}, &governance.GovernanceEvidenceError{Err: err}
	}
	t.closed = true
	t.ctl.openTasks.Delete(t.id)
	return b, nil
}

// RunTask opens a task, runs fn, and always closes the task, like Python's
// `async with` (also when fn panics). It returns fn's error joined with any
// close error.
func RunTask(ctx context.Context, ctl *InvocationController, opts TaskOptions, fn func(*Task) error) (governance.ClosedTaskBoundary, error) {
	t, err := ctl.OpenTask(ctx, opts)
	if err != nil {
		return governance.ClosedTaskBoundary{}, err
	}
	defer func() {
		if p := recover(); p != nil {
			_, _ = t.Close(ctx)
			panic(p)
		}
	}()
	runErr := fn(t)
	b, closeErr := t.Close(ctx)
	return b, errors.Join(runErr, closeErr)
}

// assign adds a committed completion to the task's duty history, unless
// its actor performed that duty before.
func (t *Task) assign(a abi.Assignment) {
	t.histMu.Lock()
	t.addAssignment(a)
	t.histMu.Unlock()
}

// addAssignment is assign for a caller that holds histMu or owns t alone.
func (t *Task) addAssignment(a abi.Assignment) {
	if !slices.Contains(t.history, a) {
		t.history = append(t.history, a)
	}
}

// dutyHistory returns a copy of the task's duty history (never nil).
func (t *Task) dutyHistory() []abi.Assignment {
	t.histMu.Lock()
	defer t.histMu.Unlock()
	return append([]abi.Assignment{}, t.history...)
}
