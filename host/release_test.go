package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/host"
)

// TestRelease_FreesAModuleNoGateUsesAndKeepsOneAGateUses: a released module
// is compiled again by the next Load (a new *Module that works), the old one
// is refused by GateWith with ErrModuleReleased, and a module a gate was
// made from is never released.
func TestRelease_FreesAModuleNoGateUsesAndKeepsOneAGateUses(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, testConfig())
	require.NoError(t, err)
	defer h.Close(ctx)

	m := load(t, h, "allow.wasm")
	require.Positive(t, m.CompiledBytes())
	require.True(t, h.Release(ctx, m))
	require.False(t, h.Release(ctx, m), "released twice")
	require.Equal(t, []string{"gate_abi_version", "gate_alloc", "gate_evaluate", "memory"}, m.Exports(), "a released module still describes itself")
	_, err = h.Gate(ctx, m, nil)
	require.ErrorIs(t, err, host.ErrModuleReleased)

	again := load(t, h, "allow.wasm")
	require.NotSame(t, m, again, "a released module is compiled again")
	g, err := h.Gate(ctx, again, nil)
	require.NoError(t, err)
	out, err := g.Evaluate(ctx, input("read"))
	require.NoError(t, err)
	require.Equal(t, "allow", string(out.Decision))
	require.False(t, h.Release(ctx, again), "a gate uses it")
	out, err = g.Evaluate(ctx, input("read"))
	require.NoError(t, err)
	require.Equal(t, "allow", string(out.Decision))

	other, err := host.New(ctx, testConfig())
	require.NoError(t, err)
	defer other.Close(ctx)
	require.False(t, other.Release(ctx, again), "another host's module")
}

// TestCheckKey_NamesTheChecks: the key changes with the limits Load
// applies, and not with what does not change a module's verdict.
func TestCheckKey_NamesTheChecks(t *testing.T) {
	ctx := context.Background()
	key := func(cfg host.Config) string {
		h, err := host.New(ctx, cfg)
		require.NoError(t, err)
		defer h.Close(ctx)
		return h.CheckKey()
	}
	base := key(host.NewConfig())
	require.Equal(t, base, key(host.NewConfig().WithPoolSize(7)))
	require.NotEqual(t, base, key(host.NewConfig().WithMemoryLimitPages(17)))
	require.NotEqual(t, base, key(host.NewConfig().WithLoadMemoryBudget(1<<20)))
	limits := host.DefaultModuleLimits()
	limits.Functions = 3
	require.NotEqual(t, base, key(host.NewConfig().WithModuleLimits(limits)))
}
