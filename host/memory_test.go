package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// TestGate_MemoryBytes reports an idle instance's linear memory, which
// grows when the guest grows it.
func TestGate_MemoryBytes(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithPoolSize(1))
	require.NoError(t, err)
	m, err := h.Load(ctx, wasmfixtures.Bytes("allow.wasm"), host.AnyDigest)
	require.NoError(t, err)
	g, err := h.Gate(ctx, m, nil)
	require.NoError(t, err)
	n, err := g.MemoryBytes(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(2*65536), n, "allow.wat declares two pages")

	// allow.wat grows its memory for an input past its 64 KiB buffer.
	_, err = g.Evaluate(ctx, abi.GateInput{Tool: "x", Arguments: []byte(`{"a":"` + strings.Repeat("x", 200_000) + `"}`)})
	require.NoError(t, err)
	grown, err := g.MemoryBytes(ctx)
	require.NoError(t, err)
	require.Greater(t, grown, n)

	require.NoError(t, h.Close(ctx))
	_, err = g.MemoryBytes(ctx)
	require.ErrorIs(t, err, host.ErrClosed)
}
