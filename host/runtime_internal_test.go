package host

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// TestHost_ExtismRuntimeMadeAtTheFirstExtismLoad: a host that runs native
// modules only (the built-ins) never makes the Extism compile runtime; the
// first Extism module makes it, and runs; Close closes it (twice is fine).
func TestHost_ExtismRuntimeMadeAtTheFirstExtismLoad(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig().WithCompilationCacheDir(t.TempDir()))
	require.NoError(t, err)

	native, err := h.Load(ctx, wasmfixtures.Bytes("spy.wasm"), AnyDigest)
	require.NoError(t, err)
	g, err := h.Gate(ctx, native, nil)
	require.NoError(t, err)
	_, err = g.Evaluate(ctx, abi.GateInput{GateID: "test", Phase: abi.PhaseCheck, Tool: "read", Arguments: []byte(`{}`)})
	require.NoError(t, err)
	require.Nil(t, h.rt, "no Extism module loaded: no Extism runtime")

	ext, err := h.Load(ctx, wasmfixtures.Bytes("extism_gate.wasm"), AnyDigest)
	require.NoError(t, err)
	require.Equal(t, KindExtism, ext.Kind())
	require.NotNil(t, h.rt)
	eg, err := h.Gate(ctx, ext, []byte(`{"deny_tools":["web_fetch"]}`))
	require.NoError(t, err)
	out, err := eg.Evaluate(ctx, abi.GateInput{GateID: "test", Phase: abi.PhaseCheck, Tool: "web_fetch", Arguments: []byte(`{}`)})
	require.NoError(t, err)
	require.Equal(t, abi.DecisionDeny, out.Decision)

	require.NoError(t, h.Close(ctx))
	require.NoError(t, h.Close(ctx))
	_, err = h.Load(ctx, wasmfixtures.Bytes("extism_gate.wasm"), AnyDigest)
	require.ErrorIs(t, err, ErrClosed)
}

// TestHost_CloseWithoutExtism: closing a host that never made the Extism
// runtime closes the rest and refuses later loads.
func TestHost_CloseWithoutExtism(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig())
	require.NoError(t, err)
	require.NoError(t, h.Close(ctx))
	require.Nil(t, h.rt)
	_, err = h.Load(ctx, wasmfixtures.Bytes("extism_gate.wasm"), AnyDigest)
	require.ErrorIs(t, err, ErrClosed)
}
