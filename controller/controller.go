package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// Config wires an InvocationController. Evidence, Policies and Gates are
// required; the rest is optional.
type Config struct {
	Evidence evidence.Store
	Policies policy.Store
	Gates    GateProvider
	// PathFacts resolves path arguments for the gates; nil passes none.
	PathFacts PathResolver
	// Approvals decides require_approval answers; nil denies them with
	// approval.required.
	Approvals ApprovalCallback
	// Projector announces committed records; nil announces nothing.
	Projector *ObservationProjector
	// Now is the clock for records; nil means time.Now.
	Now func() time.Time
	// PermitLease bounds the wait between Authorize and Complete; zero
	// means DefaultPermitLease.
	PermitLease time.Duration
	// Decided, when set, is told every remote authorization's verdict
	// (Task.Authorize) on the authorizing goroutine, after its records are
	// written: it must not block (a live view, never evidence).
	Decided func(Decided)
}

// InvocationController is the one place a governed tool call is decided,
// run and recorded. Safe for concurrent use; per-call state is never
// shared between calls.
type InvocationController struct {
	cfg        Config
	locks      chainLocks
	exceptions exceptionBook
	// openTasks maps an open task's id to its *Task, so operations run with
	// that task's contexts (Invoke, Authorize) see its workspace and
	// execution context.
	openTasks sync.Map
	permits   permitBook

	mu      sync.Mutex
	manager *Manager
}

// New validates cfg and returns a controller.
func New(cfg Config) (*InvocationController, error) {
	if cfg.Evidence == nil || cfg.Policies == nil || cfg.Gates == nil {
		return nil, errors.New("controller: Config needs Evidence, Policies and Gates")
	}
	return &InvocationController{cfg: cfg}, nil
}

func (c *InvocationController) now() time.Time {
	if c.cfg.Now != nil {
		return c.cfg.Now()
	}
	return time.Now()
}

func (c *InvocationController) attach(m *Manager) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.manager != nil && c.manager != m {
		return ErrControllerInUse
	}
	c.manager = m
	return nil
}

// Invoke runs one governed call, exactly as ADR-0087's sequence: pin the
// exact policy snapshot, record POLICY_BOUND + OPERATION_STARTED durably,
// run the applicable gates once each in snapshot order (and the check
// gates again after transforms), decide, call the tool once through a
// one-use token, and record the outcome.
//
// Errors: *governance.GovernanceBypassError (no or mismatched context),
// *governance.GovernanceDeniedError (recorded denial),
// *governance.GovernanceEvidenceError (evidence not recorded; CallExecuted
// says whether the tool ran), *governance.OutcomeEvidenceError, or the
// callable's own error (a panic comes back as *PanicError).
func (c *InvocationController) Invoke(ctx context.Context, call Call, opctx *governance.OperationContext) (any, error) {
	c.mu.Lock()
	m := c.manager
	c.mu.Unlock()
	if m == nil {
		return nil, errors.New("controller: controller governs no manager")
	}
	rt, ctl, err := m.lookup(call.Tool)
	if err != nil {
		return nil, err
	}
	if err := c.checkPin(ctl, rt, call, opctx); err != nil {
		return nil, err
	}
	op := newOperation(c, call, *opctx, nil)
	p, err := op.authorize(ctx)
	if err != nil {
		return nil, err
	}
	return op.callTool(ctx, m, p)
}

func (c *InvocationController) checkPin(ctl *InvocationController, rt *registeredTool, call Call, opctx *governance.OperationContext) error {
	switch {
	case ctl != c:
		return &governance.GovernanceBypassError{Tool: call.Tool, Reason: "tool's manager is governed by another controller"}
	case rt.binding == nil:
		return &governance.GovernanceBypassError{Tool: call.Tool, Reason: "tool is not bound to a policy"}
	}
	if err := checkContext(call, opctx); err != nil {
		return err
	}
	if opctx.PolicyID != rt.binding.PolicyID || opctx.PolicyVersion != rt.binding.Version {
		return &governance.GovernanceBypassError{Tool: call.Tool, Reason: fmt.Sprintf("operation context pins policy %s@%s, tool is bound to %s@%s", opctx.PolicyID, opctx.PolicyVersion, rt.binding.PolicyID, rt.binding.Version)}
	}
	return nil
}

// checkContext refuses a call without a valid operation context for its
// tool.
func checkContext(call Call, opctx *governance.OperationContext) error {
	switch {
	case opctx == nil:
		return &governance.GovernanceBypassError{Tool: call.Tool, Reason: "no operation context"}
	case opctx.ToolID != call.Tool:
		return &governance.GovernanceBypassError{Tool: call.Tool, Reason: "operation context is pinned to tool " + opctx.ToolID}
	}
	if err := opctx.Validate(); err != nil {
		return &governance.GovernanceBypassError{Tool: call.Tool, Reason: "invalid operation context: " + err.Error()}
	}
	return nil
}
