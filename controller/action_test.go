package controller_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/plugins/permission"
)

// nativeGate runs a built-in gate's Go logic as a controller.Gate.
type nativeGate func(abi.GateInput) abi.GateOutput

func (g nativeGate) Evaluate(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
	return g(in), nil
}

// ADR-0086 D2: the chain calls every hook with args.get("action", "") of
// the *current* arguments, so a user transform that rewrites "action" is
// rechecked on the new action.
func TestInvoke_RecheckReadsTheRewrittenAction(t *testing.T) {
	perm, err := permission.New([]byte(`{"lionagi":{"mode":"rules","deny":{"*":["evict *"]},"allow":{"*":["*"]}}}`))
	require.NoError(t, err)
	var seen []string
	policyGate := nativeGate(func(in abi.GateInput) abi.GateOutput {
		seen = append(seen, string(in.Phase)+":"+in.Action)
		return perm.Evaluate(in)
	})
	rewrite := func(to string) controller.Gate {
		return nativeGate(func(in abi.GateInput) abi.GateOutput {
			return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "user.rewrite", Arguments: json.RawMessage(to)}
		})
	}
	for _, tc := range []struct {
		name, callAction, args, rewritten string
		wantSeen                          []string
	}{
		{"action argument rewritten", "", `{"action":"status","key":"m1"}`, `{"action":"evict","key":"m1"}`,
			[]string{"check:status", "recheck:evict"}},
		{"action argument added to a call that named its action", "status", `{"key":"m1"}`, `{"key":"m1","action":"evict"}`,
			[]string{"check:status", "recheck:evict"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen = nil
			e := newEnv(t, []binding{
				hard("perm", policyGate, "read"),
				{id: "user", level: governance.LevelHard, tools: []string{"read"}, transform: true, gate: rewrite(tc.rewritten)},
			})
			_, err := e.m.Invoke(context.Background(), controller.Call{Tool: "read", Action: tc.callAction, Arguments: json.RawMessage(tc.args)}, e.opctx("read"))
			var de *governance.GovernanceDeniedError
			require.ErrorAs(t, err, &de, "the rewritten action must not escape the action rules")
			require.Equal(t, "perm", de.GateID)
			require.Equal(t, permission.CodeDeniedByRule, de.ReasonCode)
			require.Zero(t, e.calls.Load())
			require.Equal(t, tc.wantSeen, seen)
		})
	}
}

func TestNewGateInput_ActionComesFromTheArguments(t *testing.T) {
	for _, tc := range []struct{ call, args, want string }{
		{"", `{"action":"evict"}`, "evict"},
		{"status", `{"action":"evict"}`, "evict"}, // LionAGI reads args.get("action")
		{"status", `{"key":"x"}`, "status"},       // no action argument: the call's
		{"status", `{"action":7}`, "status"},      // not a string: the call's
	} {
		args, err := governance.ParseArguments(json.RawMessage(tc.args))
		require.NoError(t, err)
		in := controller.NewGateInput(controller.Call{Tool: "t", Action: tc.call}, args, nil, "g", abi.PhaseCheck)
		require.Equal(t, tc.want, in.Action, tc.args)
	}
}
