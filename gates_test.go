package govhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
	"github.com/govhost/govhost/plugins/builtin"
)

// TestGates_Isolation: a user module's binding gets chain isolation, or per
// call isolation through the wasm-call adapter; the built-in modules are
// shared (trusted, NOT isolated); two bindings of one module and
// configuration never share a gate.
func TestGates_Isolation(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	require.NoError(t, err)
	spy, err := gates.Add(wasmfixtures.Bytes("spy.wasm"))
	require.NoError(t, err)
	destructive, ok := builtin.Lookup("destructive")
	require.True(t, ok)

	gateFor := func(id, adapter, digest string) *host.Gate {
		b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
			GateID: id, AdapterID: adapter, Level: governance.LevelHard, ToolIDs: []string{"bash"}, ModuleDigest: digest, Config: "{}",
		})
		require.NoError(t, err)
		g, err := gates.GateFor(ctx, b)
		require.NoError(t, err)
		return g.(*host.Gate)
	}
	a := gateFor("tenant-a", govhost.AdapterWasm, spy)
	require.Equal(t, host.IsolationChain, a.Isolation())
	require.NotSame(t, a, gateFor("tenant-b", govhost.AdapterWasm, spy), "two bindings never share")
	require.Same(t, a, gateFor("tenant-a", govhost.AdapterWasm, spy))
	require.Equal(t, host.IsolationCall, gateFor("strict", govhost.AdapterWasmPerCall, spy).Isolation())
	require.Equal(t, host.IsolationShared, gateFor("builtin", govhost.AdapterWasm, destructive.Digest).Isolation())
	require.True(t, gates.AdapterAvailable(govhost.AdapterWasmPerCall))
	require.False(t, gates.AdapterAvailable("wasm-typo"))
}
