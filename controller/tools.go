package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Func is a tool's callable. It receives the final, governed arguments
// (numbers as float64, as encoding/json decodes them).
type Func func(ctx context.Context, args map[string]any) (any, error)

// Tool is a callable an agent may request, with the schema it advertises.
type Tool struct {
	ID          string
	Description string
	// Schema is the JSON schema of the arguments, as advertised to models.
	Schema json.RawMessage
	Fn     Func
	// Binding, when set, pins the tool to a policy version. A governed
	// manager refuses a tool whose binding differs from its own.
	Binding *PolicyPin
}

// PolicyPin names one exact policy version (ADR-0087 GovernedToolBinding
// without the tool id, which the registry supplies).
type PolicyPin struct {
	PolicyID uuid.UUID
	Version  string
}

// Errors of the tool registry.
var (
	ErrToolNotFound     = errors.New("controller: tool not registered")
	ErrToolExists       = errors.New("controller: tool already registered")
	ErrBindingConflict  = errors.New("controller: tool binding conflicts with the manager's policy pin")
	ErrAlreadyGoverned  = errors.New("controller: manager is already governed")
	ErrControllerInUse  = errors.New("controller: controller already governs another manager")
	ErrInvalidTool      = errors.New("controller: tool needs an id and a function")
	ErrCallablePanicked = errors.New("controller: tool callable panicked")
)

type registeredTool struct {
	tool    Tool
	binding *PolicyPin // the manager's pin once governed
}

// Manager is the tool registry (the seeds' ActionManager). Ungoverned, it
// calls tools directly and records nothing. Once governed, every tool on
// it, including tools registered later, is bound to the manager's policy
// pin and reachable only through its InvocationController. Safe for
// concurrent use.
type Manager struct {
	mu    sync.RWMutex
	tools map[string]*registeredTool
	ctl   *InvocationController
	pin   *PolicyPin
}

// NewManager returns an empty, ungoverned registry.
func NewManager() *Manager { return &Manager{tools: map[string]*registeredTool{}} }

// Register adds a tool. On a governed manager the tool inherits the
// manager's pin; a tool carrying a different binding is refused.
func (m *Manager) Register(t Tool) error {
	if t.ID == "" || t.Fn == nil {
		return ErrInvalidTool
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.tools[t.ID]; dup {
		return fmt.Errorf("%w: %s", ErrToolExists, t.ID)
	}
	rt := &registeredTool{tool: t, binding: t.Binding}
	if m.pin != nil {
		if t.Binding != nil && *t.Binding != *m.pin {
			return fmt.Errorf("%w: tool %s pins %s@%s", ErrBindingConflict, t.ID, t.Binding.PolicyID, t.Binding.Version)
		}
		pin := *m.pin
		rt.binding = &pin
	}
	m.tools[t.ID] = rt
	return nil
}

// Govern installs ctl as the manager's only route to its tools and binds
// every tool to pin. It can be done once.
func (m *Manager) Govern(ctl *InvocationController, pin PolicyPin) error {
	if ctl == nil || pin.PolicyID == uuid.Nil || pin.Version == "" {
		return errors.New("controller: Govern needs a controller and a policy pin")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctl != nil {
		return ErrAlreadyGoverned
	}
	for id, rt := range m.tools {
		if rt.tool.Binding != nil && *rt.tool.Binding != pin {
			return fmt.Errorf("%w: tool %s", ErrBindingConflict, id)
		}
	}
	if err := ctl.attach(m); err != nil {
		return err
	}
	m.ctl, m.pin = ctl, &pin
	for _, rt := range m.tools {
		p := pin
		rt.binding = &p
	}
	return nil
}

// Pin returns the manager's policy pin, if governed.
func (m *Manager) Pin() (PolicyPin, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.pin == nil {
		return PolicyPin{}, false
	}
	return *m.pin, true
}

func (m *Manager) lookup(id string) (*registeredTool, *InvocationController, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	rt, ok := m.tools[id]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrToolNotFound, id)
	}
	return rt, m.ctl, nil
}

// Invoke runs a call. A governed tool goes through its controller and
// needs opctx; an unbound tool on an ungoverned manager is called directly
// and produces no records.
func (m *Manager) Invoke(ctx context.Context, call Call, opctx *governance.OperationContext) (any, error) {
	rt, ctl, err := m.lookup(call.Tool)
	if err != nil {
		return nil, err
	}
	if rt.binding == nil {
		args, err := call.arguments()
		if err != nil {
			return nil, err
		}
		plain, err := args.ForCallable()
		if err != nil {
			return nil, err
		}
		return callProtected(ctx, call.Tool, rt.tool.Fn, plain)
	}
	if ctl == nil {
		return nil, &governance.GovernanceBypassError{Tool: call.Tool, Reason: "tool is bound to a policy but its manager has no controller"}
	}
	return ctl.Invoke(ctx, call, opctx)
}

// InvocationToken authorizes exactly one call of one governed tool. Only
// an InvocationController mints tokens; the zero value is never valid.
type InvocationToken struct {
	ctl         *InvocationController
	toolID      string
	operationID uuid.UUID
	used        atomic.Bool
}

// CallTool is the only route to a governed tool's callable: it consumes tok
// before the call. A nil, forged, reused or mismatched token fails with
// *governance.GovernanceBypassError and the callable is not reached.
// Unbound tools need no token.
func (m *Manager) CallTool(ctx context.Context, toolID string, tok *InvocationToken, args map[string]any) (any, error) {
	rt, ctl, err := m.lookup(toolID)
	if err != nil {
		return nil, err
	}
	if rt.binding != nil {
		if err := checkToken(ctl, toolID, tok); err != nil {
			return nil, err
		}
	}
	return callProtected(ctx, toolID, rt.tool.Fn, args)
}

func checkToken(ctl *InvocationController, toolID string, tok *InvocationToken) error {
	switch {
	case tok == nil:
		return &governance.GovernanceBypassError{Tool: toolID, Reason: "no invocation token"}
	case ctl == nil || tok.ctl != ctl:
		return &governance.GovernanceBypassError{Tool: toolID, Reason: "token was not minted by this tool's controller"}
	case tok.toolID != toolID:
		return &governance.GovernanceBypassError{Tool: toolID, Reason: "token was minted for tool " + tok.toolID}
	case !tok.used.CompareAndSwap(false, true):
		return &governance.GovernanceBypassError{Tool: toolID, Reason: "token already used"}
	}
	return nil
}

// PanicError carries a panic raised by a tool's callable, re-raised as an
// error rather than swallowed.
type PanicError struct {
	Tool  string
	Value any
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("controller: tool %s panicked: %v", e.Tool, e.Value)
}
func (e *PanicError) Unwrap() error { return ErrCallablePanicked }

func callProtected(ctx context.Context, toolID string, fn Func, args map[string]any) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &PanicError{Tool: toolID, Value: p}
		}
	}()
	return fn(ctx, args)
}
