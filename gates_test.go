package govhost_test

import (
	"context"
	"sync"
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

	gateFor := func(id, adapter, digest string) interface{ Isolation() host.Isolation } {
		b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
			GateID: id, AdapterID: adapter, Level: governance.LevelHard, ToolIDs: []string{"bash"}, ModuleDigest: digest, Config: "{}",
		})
		require.NoError(t, err)
		g, err := gates.GateFor(ctx, b)
		require.NoError(t, err)
		return g.(interface{ Isolation() host.Isolation })
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

// TestGates_ConcurrentLoads: many callers asking for several modules at
// once (activation does) all get each module's one answer: loadable
// modules are available, a module the host refuses is not, every time.
func TestGates_ConcurrentLoads(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	require.NoError(t, err)
	want := map[string]bool{}
	for name, ok := range map[string]bool{"allow.wasm": true, "spy.wasm": true, "loop.wasm": true, "missing_export.wasm": false} {
		d, err := gates.Add(wasmfixtures.Bytes(name))
		require.NoError(t, err)
		want[d] = ok
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 8 {
		for d, ok := range want {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if gates.ModuleAvailable(d) != ok {
					errs <- d
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for d := range errs {
		t.Errorf("module %s: wrong availability", d)
	}
}
