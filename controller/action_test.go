package controller_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// nativeGate runs a Go function as a controller.Gate.
type nativeGate func(abi.GateInput) abi.GateOutput

func (g nativeGate) Evaluate(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
	return g(in), nil
}

// builtins is one host for the built-in modules these tests configure,
// each module loaded (compiled) once per test process.
var builtins struct {
	mu   sync.Mutex
	h    *host.Host
	mods map[string]*host.Module
}

// builtinGate is the embedded built-in module name (plugins/builtin)
// configured with config: the gate users run, answering in process. A
// failure of the module (none is expected here) is a deny host.CodeTrap.
func builtinGate(t *testing.T, name, config string) nativeGate {
	t.Helper()
	ctx := context.Background()
	builtins.mu.Lock()
	defer builtins.mu.Unlock()
	if builtins.h == nil {
		h, err := host.New(ctx, host.NewConfig())
		require.NoError(t, err)
		builtins.h, builtins.mods = h, map[string]*host.Module{}
	}
	mod := builtins.mods[name]
	if mod == nil {
		m, ok := builtin.Lookup(name)
		require.True(t, ok, name)
		var err error
		mod, err = builtins.h.LoadTrusted(ctx, m.Wasm, m.Digest)
		require.NoError(t, err)
		builtins.mods[name] = mod
	}
	// Shared isolation, as the embedded default runs the built-ins.
	g, err := builtins.h.GateWith(ctx, mod, []byte(config), host.GateOptions{Isolation: host.IsolationShared, Binding: t.Name()})
	require.NoError(t, err)
	return func(in abi.GateInput) abi.GateOutput {
		out, err := g.Evaluate(ctx, in)
		if err != nil {
			return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: host.CodeTrap, Detail: err.Error()}
		}
		return out
	}
}

// ADR-0086 D2: the chain calls every hook with args.get("action", "") of
// the *current* arguments, so a user transform that rewrites "action" is
// rechecked on the new action.
func TestInvoke_RecheckReadsTheRewrittenAction(t *testing.T) {
	perm := builtinGate(t, "permission", `{"lionagi":{"mode":"rules","deny":{"*":["evict *"]},"allow":{"*":["*"]}}}`)
	var seen []string
	policyGate := nativeGate(func(in abi.GateInput) abi.GateOutput {
		seen = append(seen, string(in.Phase)+":"+in.Action)
		return perm(in)
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
			require.Equal(t, "permission.denied_by_rule", de.ReasonCode)
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
