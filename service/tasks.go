package service

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// OpenTaskRequest opens a task pinned to a policy version: the exact one
// (PolicyID + Version), or the one Role / Resource resolve to.
type OpenTaskRequest struct {
	PolicyID uuid.UUID
	Version  string
	Role     string
	Resource string
	Actor    *governance.ActorRef
	// Workspace is the project root the agent works in (absolute).
	Workspace string
}

// TaskInfo describes an open or just-closed task: its ids, the policy
// version it is pinned to and its workspace.
type TaskInfo struct {
	TaskID        uuid.UUID
	ChainID       uuid.UUID
	PolicyID      uuid.UUID
	PolicyVersion string
	PolicyDigest  string
	Workspace     string
}

// OpenTask opens a task and keeps it until CloseTask.
func (s *Service) OpenTask(ctx context.Context, req OpenTaskRequest) (TaskInfo, error) {
	if req.Actor != nil {
		if err := req.Actor.Validate(); err != nil {
			return TaskInfo{}, fail(CodeInvalidRequest, err)
		}
	}
	var snap governance.PolicySnapshot
	var err error
	switch {
	case req.PolicyID != uuid.Nil || req.Version != "":
		if req.PolicyID == uuid.Nil || req.Version == "" {
			return TaskInfo{}, failf(CodeInvalidRequest, "policy_id and version go together")
		}
		if req.Role != "" || req.Resource != "" {
			return TaskInfo{}, failf(CodeInvalidRequest, "give a policy pin or role/resource labels, not both")
		}
		snap, err = s.eng.Policies.Get(ctx, req.PolicyID, req.Version)
	default:
		snap, err = s.eng.Policies.Resolve(ctx, req.Role, req.Resource)
	}
	if err != nil {
		return TaskInfo{}, policyError(err)
	}
	s.mu.Lock()
	full := len(s.tasks) >= s.opts.MaxOpenTasks
	s.mu.Unlock()
	if full {
		return TaskInfo{}, failf(CodeTooManyTasks, "%d tasks are open; close some first", s.opts.MaxOpenTasks)
	}
	t, err := s.ctl.OpenTask(ctx, controller.TaskOptions{
		PolicyID: snap.PolicyID(), Version: snap.Version(), Actor: req.Actor, Workspace: req.Workspace,
	})
	if err != nil {
		var ve *governance.ValidationError
		if errors.As(err, &ve) {
			return TaskInfo{}, fail(CodeInvalidRequest, err)
		}
		return TaskInfo{}, policyError(err)
	}
	s.mu.Lock()
	s.tasks[t.ID()] = t
	s.mu.Unlock()
	return taskInfo(t, snap.Digest()), nil
}

func taskInfo(t *controller.Task, digest string) TaskInfo {
	pin := t.Pin()
	return TaskInfo{TaskID: t.ID(), ChainID: t.ChainID(), PolicyID: pin.PolicyID, PolicyVersion: pin.Version, PolicyDigest: digest, Workspace: t.Workspace()}
}

func (s *Service) task(id uuid.UUID) (*controller.Task, error) {
	s.mu.Lock()
	t := s.tasks[id]
	s.mu.Unlock()
	if t == nil {
		return nil, failf(CodeTaskNotFound, "task %s is not open here (unknown, or already closed)", id)
	}
	return t, nil
}

// ListTasks returns the open tasks, by task id.
func (s *Service) ListTasks(ctx context.Context) []TaskInfo {
	s.mu.Lock()
	tasks := make([]*controller.Task, 0, len(s.tasks))
	for _, t := range s.tasks {
		tasks = append(tasks, t)
	}
	s.mu.Unlock()
	out := make([]TaskInfo, 0, len(tasks))
	for _, t := range tasks {
		digest := ""
		if snap, err := s.eng.Policies.Get(ctx, t.Pin().PolicyID, t.Pin().Version); err == nil {
			digest = snap.Digest()
		}
		out = append(out, taskInfo(t, digest))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TaskID.String() < out[j].TaskID.String() })
	return out
}

// ClosedTask is what closing a task returns: the boundary, the chain head
// a certificate is minted against, and the operations left without a
// terminal (authorized, never completed), which keep it from minting.
type ClosedTask struct {
	TaskInfo
	Head                 string
	OpenedAt             time.Time
	ClosedAt             time.Time
	UnfinishedOperations []uuid.UUID
}

// CloseTask appends TASK_CLOSED and forgets the task.
func (s *Service) CloseTask(ctx context.Context, id uuid.UUID) (ClosedTask, error) {
	t, err := s.task(id)
	if err != nil {
		return ClosedTask{}, err
	}
	b, err := t.Close(ctx)
	if errors.Is(err, controller.ErrTaskClosed) {
		return ClosedTask{}, failf(CodeTaskNotFound, "task %s is already closed", id)
	}
	if err != nil {
		return ClosedTask{}, evidenceFailure(err)
	}
	s.mu.Lock()
	delete(s.tasks, id)
	s.mu.Unlock()
	head, err := s.eng.Evidence.Head(ctx, t.ChainID())
	if err != nil {
		return ClosedTask{}, fail(CodeUnavailable, err)
	}
	out := ClosedTask{TaskInfo: taskInfo(t, ""), Head: head.Hash, OpenedAt: b.OpenedAt, ClosedAt: b.ClosedAt, UnfinishedOperations: []uuid.UUID{}}
	if snap, err := s.eng.Policies.Get(ctx, b.PolicyID, b.PolicyVersion); err == nil {
		out.PolicyDigest = snap.Digest()
	}
	// From the evidence itself: every operation started without a terminal
	// record (authorized and never completed, or still waiting for an
	// approver when the task closed).
	recs, err := s.eng.Evidence.Read(ctx, t.ChainID(), -1)
	if err != nil {
		return ClosedTask{}, fail(CodeUnavailable, err)
	}
	ended := map[uuid.UUID]bool{}
	for _, r := range recs {
		switch r.RecordType {
		case governance.OperationDenied, governance.CallableCompleted, governance.CallableFailed:
			ended[r.OperationID.UUID] = true
		}
	}
	for _, r := range recs {
		if r.RecordType == governance.OperationStarted && !ended[r.OperationID.UUID] {
			out.UnfinishedOperations = append(out.UnfinishedOperations, r.OperationID.UUID)
		}
	}
	s.closedTasks.add(out)
	return out, nil
}

// policyError classifies a policy store refusal; anything else (the store
// could not be read) stays an internal error.
func policyError(err error) error {
	var nf *governance.PolicyNotFoundError
	var ce *governance.PolicyConflictError
	var ae *governance.AmbiguousPolicyError
	var e *Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.As(err, &nf):
		return fail(CodePolicyNotFound, err)
	case errors.As(err, &ce), errors.Is(err, policy.ErrBindingConflict):
		return fail(CodePolicyConflict, err)
	case errors.Is(err, policy.ErrAmbiguousBind):
		return fail(CodeBindAmbiguous, err)
	case errors.Is(err, policy.ErrNotActive):
		return fail(CodePolicyInvalid, err)
	case errors.As(err, &ae), errors.Is(err, governance.ErrInvalid):
		return fail(CodePolicyInvalid, err)
	}
	return err
}
