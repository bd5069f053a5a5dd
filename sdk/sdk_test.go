package sdk

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
)

type testConfig struct {
	Blocked string `json:"blocked"`
}

func reset() { g = state{} }

func TestEvaluate_Unregistered(t *testing.T) {
	reset()
	out := Evaluate(abi.GateInput{Tool: "bash"})
	require.Equal(t, abi.DecisionDeny, out.Decision)
	require.Equal(t, ReasonUnregistered, out.ReasonCode)
}

func TestRegister_NoConfig(t *testing.T) {
	reset()
	Register(func(in abi.GateInput) abi.GateOutput { return Allow("t.ok") })
	require.Equal(t, "t.ok", Evaluate(abi.GateInput{}).ReasonCode, "evaluate without configure acts as {}")
	require.NoError(t, Configure([]byte(`{}`)))
	require.NoError(t, Configure([]byte(` null `)))
	require.ErrorIs(t, Configure([]byte(`{"a":1}`)), ErrConfigUnsupported)
	require.Panics(t, func() { Register(func(abi.GateInput) abi.GateOutput { return Allow("x") }) })
}

func TestRegisterWithConfig(t *testing.T) {
	reset()
	RegisterWithConfig(func(cfg testConfig, in abi.GateInput) abi.GateOutput {
		if in.Tool == cfg.Blocked {
			return Deny("t.blocked", "")
		}
		return Allow("t.ok")
	})
	require.NoError(t, Configure([]byte(`{"blocked":"bash"}`)))
	require.Equal(t, abi.DecisionDeny, Evaluate(abi.GateInput{Tool: "bash"}).Decision)
	require.Equal(t, abi.DecisionAllow, Evaluate(abi.GateInput{Tool: "read"}).Decision)
	require.Error(t, Configure([]byte(`{"blocked":"bash","typo":1}`)), "unknown fields are refused")
	require.Error(t, Configure([]byte(`{"blocked":"bash"} {}`)), "trailing data is refused")
	require.Equal(t, int32(1), configure([]byte(`[`)))
	require.Equal(t, int32(abi.ConfigureOK), configure([]byte(`{}`)))
}

func TestEvaluate_BadInput(t *testing.T) {
	reset()
	Register(func(in abi.GateInput) abi.GateOutput { return Allow("t.ok") })
	var out abi.GateOutput
	require.NoError(t, json.Unmarshal(evaluate([]byte(`{"tool":`)), &out))
	require.Equal(t, ReasonBadInput, out.ReasonCode)
}

func TestAlloc_ReusesBuffer(t *testing.T) {
	reset()
	a := alloc(100)
	require.Len(t, a, 100)
	b := alloc(50)
	require.Equal(t, &a[0], &b[0])
	require.Nil(t, alloc(-1))
}

func TestDescribe(t *testing.T) {
	reset()
	require.JSONEq(t, `{"name":""}`, string(describe()))
	Describe(abi.Description{Name: "x", Version: "1"})
	require.JSONEq(t, `{"name":"x","version":"1"}`, string(describe()))
}

func TestEvaluate_BadOutputArguments(t *testing.T) {
	reset()
	Register(func(in abi.GateInput) abi.GateOutput {
		out := Allow("t.ok")
		out.Arguments = json.RawMessage(`{broken`)
		return out
	})
	out := Evaluate(abi.GateInput{})
	require.Equal(t, abi.DecisionDeny, out.Decision)
	require.Equal(t, ReasonBadOutput, out.ReasonCode)
}

func TestEvaluate_TransformArguments(t *testing.T) {
	reset()
	Register(func(in abi.GateInput) abi.GateOutput {
		out := Allow("t.rewritten")
		out.Arguments = json.RawMessage(`{"command":"ls"}`)
		return out
	})
	out := Evaluate(abi.GateInput{Arguments: json.RawMessage(`{"command":"rm -rf /"}`)})
	require.JSONEq(t, `{"command":"ls"}`, string(out.Arguments))
}
