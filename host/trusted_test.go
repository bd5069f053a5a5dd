package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// A trusted module's instance setup (a Go runtime's start, gate_configure)
// is bounded by the load timeout, not the per-call one, so a busy machine
// cannot fail the built-in gates closed at their first call; the same bytes
// loaded as a user's module keep the per-call bound for setup too.
func TestLoadTrusted_SetupNotBoundByTheCallTimeout(t *testing.T) {
	ctx := context.Background()
	wasm := wasmfixtures.Bytes("trivial_go.wasm")
	// No Go runtime starts within a microsecond.
	cfg := testConfig().WithCallTimeout(time.Microsecond)

	user, err := host.New(ctx, cfg)
	require.NoError(t, err)
	defer user.Close(ctx)
	m, err := user.Load(ctx, wasm, host.AnyDigest)
	require.NoError(t, err)
	_, err = user.Gate(ctx, m, nil)
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeTimeout, ge.Code)

	own, err := host.New(ctx, cfg)
	require.NoError(t, err)
	defer own.Close(ctx)
	tm, err := own.LoadTrusted(ctx, wasm, host.AnyDigest)
	require.NoError(t, err)
	_, err = own.Gate(ctx, tm, nil)
	require.NoError(t, err, "setup of a trusted module waits for the Go runtime's start")
}
