package controller

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// governedManager returns a manager governed by a controller whose stores
// are never reached in these tests: every bypass is refused before them.
func governedManager(t *testing.T) (*Manager, *InvocationController, *int) {
	t.Helper()
	ctl, err := New(Config{Evidence: evidence.NewMemStore(), Policies: nopPolicies{}, Gates: GateProviderFunc(func(context.Context, governance.ExecutableGateBinding) (Gate, error) {
		return nil, errors.New("unused")
	})})
	require.NoError(t, err)
	m := NewManager()
	calls := new(int)
	require.NoError(t, m.Register(Tool{ID: "bash", Fn: func(context.Context, map[string]any) (any, error) { *calls++; return "ran", nil }}))
	require.NoError(t, m.Register(Tool{ID: "read", Fn: func(context.Context, map[string]any) (any, error) { *calls++; return "ran", nil }}))
	require.NoError(t, m.Govern(ctl, PolicyPin{PolicyID: uuid.New(), Version: "v1"}))
	return m, ctl, calls
}

func requireBypass(t *testing.T, err error) {
	t.Helper()
	var be *governance.GovernanceBypassError
	require.ErrorAs(t, err, &be)
}

func TestCallTool_TokenRoutes(t *testing.T) {
	ctx := context.Background()
	m, ctl, calls := governedManager(t)
	other, otherCtl, _ := governedManager(t)
	_ = other

	_, err := m.CallTool(ctx, "bash", nil, nil)
	requireBypass(t, err)
	_, err = m.CallTool(ctx, "bash", &InvocationToken{}, nil)
	requireBypass(t, err)
	_, err = m.CallTool(ctx, "bash", &InvocationToken{ctl: otherCtl, toolID: "bash"}, nil)
	requireBypass(t, err)
	_, err = m.CallTool(ctx, "bash", &InvocationToken{ctl: ctl, toolID: "read"}, nil)
	requireBypass(t, err)
	require.Zero(t, *calls, "no bypass reached the callable")

	tok := &InvocationToken{ctl: ctl, toolID: "bash", operationID: uuid.New()}
	res, err := m.CallTool(ctx, "bash", tok, nil)
	require.NoError(t, err)
	require.Equal(t, "ran", res)
	_, err = m.CallTool(ctx, "bash", tok, nil)
	requireBypass(t, err)
	require.Equal(t, 1, *calls, "a token is good for one call")
}

func TestInvoke_ContextRoutes(t *testing.T) {
	ctx := context.Background()
	m, ctl, calls := governedManager(t)
	pin, _ := m.Pin()
	good := governance.OperationContext{
		OperationID: uuid.New(), ChainID: uuid.New(), TaskBoundaryID: uuid.New(), ToolID: "bash",
		PolicyID: pin.PolicyID, PolicyVersion: pin.Version, PolicyDigest: governance.SHA256Hex(nil),
	}
	cases := map[string]*governance.OperationContext{
		"no context": nil,
	}
	otherTool := good
	otherTool.ToolID = "read"
	cases["pinned to another tool"] = &otherTool
	otherPolicy := good
	otherPolicy.PolicyID = uuid.New()
	cases["pinned to another policy"] = &otherPolicy
	otherVersion := good
	otherVersion.PolicyVersion = "v2"
	cases["pinned to another version"] = &otherVersion
	invalid := good // no start time
	cases["invalid context"] = &invalid
	for name, opctx := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := m.Invoke(ctx, Call{Tool: "bash"}, opctx)
			requireBypass(t, err)
			_, err = ctl.Invoke(ctx, Call{Tool: "bash"}, opctx)
			requireBypass(t, err)
		})
	}
	// A controller reached for a manager it does not govern.
	_, ctl2, _ := governedManager(t)
	_, err := ctl2.Invoke(ctx, Call{Tool: "bash"}, &good)
	require.Error(t, err)
	require.Zero(t, *calls)
}

// nopPolicies fails every lookup; bypass checks happen before it is asked.
type nopPolicies struct{ governanceStoreStub }
