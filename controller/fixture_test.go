package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// fakeGate answers with fn and counts its calls and the inputs it saw.
type fakeGate struct {
	mu     sync.Mutex
	fn     func(ctx context.Context, in abi.GateInput) (abi.GateOutput, error)
	inputs []abi.GateInput
}

func (g *fakeGate) Evaluate(ctx context.Context, in abi.GateInput) (abi.GateOutput, error) {
	g.mu.Lock()
	g.inputs = append(g.inputs, in)
	g.mu.Unlock()
	return g.fn(ctx, in)
}

func (g *fakeGate) calls() []abi.GateInput {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]abi.GateInput(nil), g.inputs...)
}

func answer(d abi.Decision, reason string) *fakeGate {
	return &fakeGate{fn: func(context.Context, abi.GateInput) (abi.GateOutput, error) {
		return abi.GateOutput{Decision: d, ReasonCode: reason, Message: "msg:" + reason}, nil
	}}
}

// binding describes one gate of a test policy.
type binding struct {
	id        string
	level     governance.GateLevel
	tools     []string
	transform bool
	gate      controller.Gate
}

// env is a governed manager over in-memory stores.
type env struct {
	t        testing.TB
	store    evidence.Store
	policies policy.Store
	ctl      *controller.InvocationController
	m        *controller.Manager
	snap     governance.PolicySnapshot
	task     uuid.UUID
	chain    uuid.UUID
	calls    atomic.Int64
	proj     *controller.ObservationProjector
}

type envOption func(*controller.Config)

func newEnv(t testing.TB, bindings []binding, opts ...envOption) *env {
	t.Helper()
	return newEnvWithStore(t, evidence.NewMemStore(), bindings, opts...)
}

func newEnvWithStore(t testing.TB, store evidence.Store, bindings []binding, opts ...envOption) *env {
	t.Helper()
	ctx := context.Background()
	gates := map[string]controller.Gate{}
	var specs []governance.ExecutableGateBinding
	for i, b := range bindings {
		eb, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
			GateID: b.id, AdapterID: "wasm", Level: b.level, Order: i, ToolIDs: b.tools,
			ModuleDigest: governance.SHA256Hex([]byte(b.id)), Transform: b.transform,
		})
		require.NoError(t, err)
		specs = append(specs, eb)
		gates[b.id] = b.gate
	}
	ps := policy.NewMemStore(policy.AvailabilityFuncs{
		Adapter: func(string) bool { return true }, Module: func(string) bool { return true },
	})
	snap, err := governance.NewPolicySnapshot(uuid.New(), "2026.11.1", specs)
	require.NoError(t, err)
	require.NoError(t, ps.Put(ctx, snap))
	snap, err = ps.Activate(ctx, snap.PolicyID(), snap.Version(), &governance.ActorRef{Kind: "user", ID: "admin"}, time.Now())
	require.NoError(t, err)

	e := &env{t: t, store: store, policies: ps, snap: snap, task: uuid.New(), chain: uuid.New(), proj: controller.NewObservationProjector()}
	cfg := controller.Config{
		Evidence: store, Policies: ps, Projector: e.proj,
		Gates: controller.GateProviderFunc(func(_ context.Context, b governance.ExecutableGateBinding) (controller.Gate, error) {
			g, ok := gates[b.GateID()]
			if !ok {
				return nil, errors.New("no such gate")
			}
			return g, nil
		}),
	}
	for _, o := range opts {
		o(&cfg)
	}
	e.ctl, err = controller.New(cfg)
	require.NoError(t, err)
	e.m = controller.NewManager()
	require.NoError(t, e.m.Register(controller.Tool{ID: "bash", Fn: e.echo}))
	require.NoError(t, e.m.Govern(e.ctl, controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}))
	require.NoError(t, e.m.Register(controller.Tool{ID: "read", Fn: e.echo}))
	return e
}

// echo is a tool that counts its calls and returns its arguments.
func (e *env) echo(_ context.Context, args map[string]any) (any, error) {
	e.calls.Add(1)
	return args, nil
}

func (e *env) opctx(tool string) *governance.OperationContext {
	c, err := governance.NewOperationContext(governance.OperationContext{
		OperationID: uuid.New(), ChainID: e.chain, TaskBoundaryID: e.task, ToolID: tool,
		Actor:    &governance.ActorRef{Kind: "agent", ID: "coder"},
		PolicyID: e.snap.PolicyID(), PolicyVersion: e.snap.Version(), PolicyDigest: e.snap.Digest(), StartedAt: time.Now(),
	})
	require.NoError(e.t, err)
	return &c
}

func (e *env) invoke(tool, args string) (any, error) {
	return e.m.Invoke(context.Background(), controller.Call{Tool: tool, Arguments: json.RawMessage(args)}, e.opctx(tool))
}

func (e *env) records() []governance.EvidenceRecord {
	recs, err := e.store.Read(context.Background(), e.chain, -1)
	require.NoError(e.t, err)
	return recs
}

func (e *env) types() []governance.EvidenceType {
	var out []governance.EvidenceType
	for _, r := range e.records() {
		out = append(out, r.RecordType)
	}
	return out
}

func (e *env) payload(i int) map[string]any {
	var p map[string]any
	require.NoError(e.t, json.Unmarshal([]byte(e.records()[i].PayloadJSON), &p))
	return p
}

func (e *env) requireVerifies() {
	e.t.Helper()
	head, err := e.store.Head(context.Background(), e.chain)
	require.NoError(e.t, err)
	res, err := e.store.Verify(context.Background(), e.chain, head.Hash)
	require.NoError(e.t, err)
	require.True(e.t, res.Valid, "%+v", res)
}

var (
	started   = governance.OperationStarted
	bound     = governance.PolicyBound
	evaluated = governance.GateEvaluated
	denied    = governance.OperationDenied
	completed = governance.CallableCompleted
	failed    = governance.CallableFailed
)
