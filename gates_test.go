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

// prepareBinding is a hard binding of digest to bash, configured with {}.
func prepareBinding(t *testing.T, id, digest string) governance.ExecutableGateBinding {
	t.Helper()
	b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
		GateID: id, AdapterID: govhost.AdapterWasm, Level: governance.LevelHard, ToolIDs: []string{"bash"}, ModuleDigest: digest, Config: "{}",
	})
	require.NoError(t, err)
	return b
}

// TestGates_PrepareLoadsEachModuleOnce: Prepare resolves every binding's
// gate side by side, compiling each module once however many bindings
// share it, and leaves every gate configured (an instance in its pool), so
// the first call resolves nothing more.
func TestGates_PrepareLoadsEachModuleOnce(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	require.NoError(t, err)
	spy, err := gates.Add(wasmfixtures.Bytes("spy.wasm"))
	require.NoError(t, err)
	allow, err := gates.Add(wasmfixtures.Bytes("allow.wasm"))
	require.NoError(t, err)
	destructive, ok := builtin.Lookup("destructive")
	require.True(t, ok)
	bindings := []governance.ExecutableGateBinding{
		prepareBinding(t, "destructive-a", destructive.Digest), prepareBinding(t, "spy", spy),
		prepareBinding(t, "destructive-b", destructive.Digest), prepareBinding(t, "allow", allow),
		prepareBinding(t, "spy-again", spy),
	}
	require.NoError(t, gates.Prepare(ctx, bindings))
	require.EqualValues(t, 3, h.Compiles(), "three modules, each compiled once")
	pools := gates.Pools()
	require.Len(t, pools, len(bindings))
	for _, p := range pools {
		require.Equal(t, 1, p.Live, "gate %s configured", p.GateID)
	}
	for _, b := range bindings {
		_, err := gates.GateFor(ctx, b)
		require.NoError(t, err)
	}
	require.EqualValues(t, 3, h.Compiles(), "the gates were ready: nothing compiled again")
}

// TestGates_PrepareFailsWithTheFirstFailingBinding: a module the host
// refuses fails Prepare with the host's typed error, named by its binding;
// when several fail, the error is the first in binding order's, whichever
// failed first; the other gates are resolved all the same.
func TestGates_PrepareFailsWithTheFirstFailingBinding(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	require.NoError(t, err)
	refused, err := gates.Add(wasmfixtures.Bytes("missing_export.wasm"))
	require.NoError(t, err)
	spy, err := gates.Add(wasmfixtures.Bytes("spy.wasm"))
	require.NoError(t, err)
	destructive, ok := builtin.Lookup("destructive")
	require.True(t, ok)
	unknown := "00000000000000000000000000000000000000000000000000000000000000ff"
	bindings := []governance.ExecutableGateBinding{
		prepareBinding(t, "destructive", destructive.Digest),
		prepareBinding(t, "refused", refused), // compiles before it fails
		prepareBinding(t, "unknown", unknown), // fails at once
		prepareBinding(t, "spy", spy),
	}
	for range 3 {
		err = gates.Prepare(ctx, bindings)
		var ge *host.GuestError
		require.ErrorAs(t, err, &ge)
		require.Equal(t, host.CodeMissingExport, ge.Code)
		require.NotErrorIs(t, err, govhost.ErrModuleUnknown)
		require.Regexp(t, `^gate refused: `, err.Error())
	}
	live := map[string]int{}
	for _, p := range gates.Pools() {
		live[p.GateID] = p.Live
	}
	require.Equal(t, map[string]int{"destructive": 1, "spy": 1}, live)
}
