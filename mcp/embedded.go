package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/pathfacts"
)

// EmbeddedOptions opens a session on the embedded engine.
type EmbeddedOptions struct {
	// Engine opens the engine: the data directory (govhost.DefaultDir when
	// Dir is empty), the store, the logger and the Wasm host's
	// configuration, as every other command opens it.
	Engine govhost.Options
	// PolicyFile, when set, is stored and activated (idempotent) and pins
	// the session. Otherwise PolicyID and Version pin it, or, when both are
	// empty, the policy bound to Resource (or the global binding).
	PolicyFile string
	PolicyID   uuid.UUID
	Version    string
	Resource   string
	// Profile is the default coding-agent policy's profile installed when
	// no policy is given and none is bound (profiles.Balanced when empty).
	Profile string
	// Workspace is each task's workspace root (the pathguard
	// "$workspace"); empty: pathfacts.Workspace of the process's working
	// directory.
	Workspace string
	// Approvals answers require_approval; nil denies them. ApprovalTimeout
	// bounds each wait (then the call is denied); zero means no bound
	// beyond the call itself.
	Approvals       controller.ApprovalCallback
	ApprovalTimeout time.Duration
	Actor           *governance.ActorRef
	// TaskPerSession opens no task now: the caller opens one per session
	// with NewTask (the HTTP proxy). Otherwise Governor is the one task.
	TaskPerSession bool
}

// Embedded is an open embedded session: the governor of one task and what
// it holds open.
type Embedded struct {
	Governor *TaskGovernor
	// Bound is Proxy.Bound for the session's policy.
	Bound func(context.Context, []string) (map[string]bool, error)
	// Policy is the pinned snapshot.
	Policy governance.PolicySnapshot
	eng    *govhost.Engine
	ctl    *controller.InvocationController
	actor  *governance.ActorRef
	// certDir receives the certificates.
	certDir string
	// workspace is every task's workspace root.
	workspace string
}

// OpenEmbedded opens the engine, pins the policy and opens the session's
// task. Close the result when the session is over (after Governor.Close).
func OpenEmbedded(ctx context.Context, o EmbeddedOptions) (*Embedded, error) {
	eng, err := govhost.Open(ctx, o.Engine)
	if err != nil {
		return nil, err
	}
	e := &Embedded{eng: eng}
	ok := false
	defer func() {
		if !ok {
			_ = eng.Close(ctx)
		}
	}()
	switch {
	case o.PolicyFile != "":
		f, err := govhost.ReadPolicyFile(o.PolicyFile)
		if err != nil {
			return nil, err
		}
		snap, _, err := eng.PutPolicyFile(ctx, f)
		if err != nil {
			return nil, err
		}
		if e.Policy, err = eng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), o.Actor, time.Now()); err != nil {
			return nil, err
		}
	case o.PolicyID != uuid.Nil || o.Version != "":
		if o.PolicyID == uuid.Nil || o.Version == "" {
			return nil, errors.New("mcp: a policy pin needs both an id and a version")
		}
		if e.Policy, err = eng.Policies.Get(ctx, o.PolicyID, o.Version); err != nil {
			return nil, err
		}
	default:
		e.Policy, err = eng.Policies.Resolve(ctx, "", o.Resource)
		var nf *governance.PolicyNotFoundError
		if errors.As(err, &nf) && o.Resource == "" {
			// Nothing bound: the default coding-agent policy, as serve
			// installs it on a first start.
			actor := &governance.ActorRef{Kind: "system", ID: "govhost-mcp"}
			e.Policy, _, err = eng.EnsureDefaultPolicy(ctx, o.Profile, actor)
		}
		if err != nil {
			return nil, fmt.Errorf("mcp: no policy given and none bound: %w", err)
		}
	}
	approvals := o.Approvals
	if approvals != nil && o.ApprovalTimeout > 0 {
		approvals = WithApprovalTimeout(approvals, o.ApprovalTimeout)
	}
	ctl, err := eng.NewController(controller.Config{Approvals: approvals})
	if err != nil {
		return nil, err
	}
	dir := o.Engine.Dir
	if dir == "" {
		dir = govhost.DefaultDir
	}
	e.ctl, e.actor, e.certDir = ctl, o.Actor, filepath.Join(dir, "certificates")
	e.workspace = o.Workspace
	if e.workspace == "" {
		if wd, err := os.Getwd(); err == nil {
			e.workspace = pathfacts.Workspace(wd)
		}
	}
	if !o.TaskPerSession {
		if e.Governor, err = e.NewTask(ctx); err != nil {
			return nil, err
		}
	}
	e.Bound = PolicyBound(eng.Policies, e.Policy.PolicyID(), e.Policy.Version())
	ok = true
	return e, nil
}

// NewTask opens a task under the session's policy: the governor of one
// more MCP session.
func (e *Embedded) NewTask(ctx context.Context) (*TaskGovernor, error) {
	task, err := e.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e.Policy.PolicyID(), Version: e.Policy.Version(), Actor: e.actor, Workspace: e.workspace})
	if err != nil {
		return nil, err
	}
	return &TaskGovernor{Ctl: e.ctl, Task: task, Issuer: e.eng.Issuer(), Evidence: e.eng.Evidence, CertDir: e.certDir}, nil
}

// Close closes the engine.
func (e *Embedded) Close(ctx context.Context) error { return e.eng.Close(ctx) }

// WithApprovalTimeout bounds each approval wait by d: an approver that has
// not answered by then denies (approval.required).
func WithApprovalTimeout(cb controller.ApprovalCallback, d time.Duration) controller.ApprovalCallback {
	return func(ctx context.Context, req controller.ApprovalRequest) (controller.ApprovalDecision, error) {
		ctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		return cb(ctx, req)
	}
}
