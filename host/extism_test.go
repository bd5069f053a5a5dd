package host_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
)

func TestExtism_Evaluate(t *testing.T) {
	h := sharedHost(t)
	m := load(t, h, "extism_gate.wasm")
	require.Equal(t, host.KindExtism, m.Kind())
	require.True(t, m.Configurable())

	g, err := h.Gate(context.Background(), m, []byte(`{"deny_tools":["web_fetch"]}`))
	require.NoError(t, err)
	out, err := g.Evaluate(context.Background(), input("web_fetch"))
	require.NoError(t, err)
	require.Equal(t, abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: "extismgate.tool_denied"}, out)
	out, err = g.Evaluate(context.Background(), input("read"))
	require.NoError(t, err)
	require.Equal(t, abi.DecisionAllow, out.Decision)

	d, ok, err := g.Describe(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "extismgate", d.Name)

	trivial := gate(t, h, "extism_gate.wasm", `{"mode":"trivial"}`)
	out, err = trivial.Evaluate(context.Background(), input("web_fetch"))
	require.NoError(t, err)
	require.Equal(t, "trivial.denied", out.ReasonCode)
}

func TestExtism_ConfigRejected(t *testing.T) {
	h := sharedHost(t)
	_, err := h.Gate(context.Background(), load(t, h, "extism_gate.wasm"), []byte(`{"mode":5}`))
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeConfigRejected, ge.Code)
}

// TestExtism_Hostile: the same limits and containment hold for Extism
// modules, and the host keeps serving afterwards.
func TestExtism_Hostile(t *testing.T) {
	h := sharedHost(t)
	g := gate(t, h, "extism_gate.wasm", `{"deny_tools":["web_fetch"]}`)
	strictGate := gate(t, strictHost(t), "extism_gate.wasm", `{"deny_tools":["web_fetch"]}`)
	ctx := context.Background()
	for tool, code := range map[string]string{
		"loop":    host.CodeTimeout,
		"membomb": host.CodeMemoryLimit,
		"panic":   host.CodeTrap,
		"fail":    host.CodeTrap,
		"http":    host.CodeTrap,
	} {
		t.Run(tool, func(t *testing.T) {
			g := g
			if code == host.CodeTimeout {
				g = strictGate
			}
			start := time.Now()
			out, err := g.Evaluate(ctx, input(tool))
			var ge *host.GuestError
			require.ErrorAs(t, err, &ge)
			require.Equal(t, code, ge.Code)
			require.Equal(t, abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: code}, out)
			require.NotContains(t, err.Error(), "GUEST")
			// Logged, not asserted tightly: the bound only catches a guest that
			// was not stopped.
			t.Logf("contained in %v", time.Since(start))
			require.Less(t, time.Since(start), 15*time.Second, "a failing guest is stopped")

			out, err = g.Evaluate(ctx, input("web_fetch"))
			require.NoError(t, err, "a fresh instance serves the next call")
			require.Equal(t, "extismgate.tool_denied", out.ReasonCode)
		})
	}
}

func TestExtism_Sandbox_Probe(t *testing.T) {
	t.Setenv("GOVHOST_SECRET", "x")
	g := gate(t, sharedHost(t), "extism_gate.wasm", `{"deny_tools":["web_fetch"]}`)
	out, err := g.Evaluate(context.Background(), input("probe"))
	require.NoError(t, err)
	var p struct {
		OpenFailed bool     `json:"open_failed"`
		Environ    []string `json:"environ"`
		UnixNano   int64    `json:"unix_nano"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.Detail), &p))
	require.True(t, p.OpenFailed)
	require.Empty(t, p.Environ)
	require.Less(t, p.UnixNano, time.Now().UnixNano()-int64(365*24*time.Hour))
}

func TestExtism_CallerDeadline(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, testConfig().WithCallTimeout(0))
	require.NoError(t, err)
	defer h.Close(ctx)
	g := gate(t, h, "extism_gate.wasm", `{}`)
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = g.Evaluate(dctx, input("loop"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
