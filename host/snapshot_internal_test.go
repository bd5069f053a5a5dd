package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/native"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// TestGate_SharedKeepsNoSnapshot: a shared gate's instances are never reset,
// so they keep no copy of their memory; chain and call gates of the same
// module do (their resets restore it).
func TestGate_SharedKeepsNoSnapshot(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig().WithPoolSize(1))
	require.NoError(t, err)
	defer h.Close(ctx)
	m, err := h.Load(ctx, wasmfixtures.Bytes("spy.wasm"), AnyDigest)
	require.NoError(t, err)
	require.True(t, m.nativeState.Resettable, "fixture must be resettable for this test to mean anything")
	for _, tc := range []struct {
		isolation Isolation
		snapshot  bool
	}{{IsolationShared, false}, {IsolationChain, true}, {IsolationCall, true}} {
		g, err := h.GateWith(ctx, m, nil, GateOptions{Isolation: tc.isolation})
		require.NoError(t, err)
		_, err = g.EvaluateChain(ctx, "a", abi.GateInput{GateID: "test", Phase: abi.PhaseCheck, Tool: "read", Arguments: []byte(`{"token":"x"}`)})
		require.NoError(t, err)
		p, err := g.pool.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, tc.snapshot, p.instance.(*native.Instance).Resettable(), "isolation %v", tc.isolation)
		g.pool.Put(p)
	}
}
