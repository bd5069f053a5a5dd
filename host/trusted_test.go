package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
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

// A trusted load takes its digest at its word and hashes the bytes only
// when it must read them: on a warm cache (a restart) the built-in's bytes
// are neither hashed nor touched, and what runs is the code that digest
// named when the cache entry was written, whatever bytes were passed. Where
// the bytes are read (a cold cache, no cache directory), bytes that do not
// hash to the digest are refused as Load refuses them; Load always hashes.
func TestLoadTrusted_HashesOnlyTheBytesItReads(t *testing.T) {
	ctx := context.Background()
	allow := wasmfixtures.Bytes("allow.wasm")
	digest := governance.SHA256Hex(allow)
	zeroed := make([]byte, len(allow)) // not even Wasm: reading it would fail
	in := abi.GateInput{GateID: "g", Phase: abi.PhaseCheck, Tool: "t", Arguments: []byte(`{}`)}

	warm := t.TempDir()
	first, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(warm))
	require.NoError(t, err)
	_, err = first.LoadTrusted(ctx, allow, digest)
	require.NoError(t, err)
	require.NoError(t, first.Close(ctx))

	restart, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(warm))
	require.NoError(t, err)
	defer restart.Close(ctx)
	m, err := restart.LoadTrusted(ctx, zeroed, "sha256:"+strings.ToUpper(digest))
	require.NoError(t, err, "a warm start never reads the bytes")
	require.Equal(t, digest, m.Digest())
	g, err := restart.Gate(ctx, m, nil)
	require.NoError(t, err)
	out, err := g.Evaluate(ctx, in)
	require.NoError(t, err)
	require.Equal(t, abi.DecisionAllow, out.Decision, "the digest's code runs")

	for name, cfg := range map[string]host.Config{
		"cold cache": host.NewConfig().WithCompilationCacheDir(t.TempDir()),
		"no cache":   host.NewConfig(),
	} {
		t.Run(name, func(t *testing.T) {
			h, err := host.New(ctx, cfg)
			require.NoError(t, err)
			defer h.Close(ctx)
			_, err = h.LoadTrusted(ctx, zeroed, digest)
			var mismatch *host.DigestMismatchError
			require.ErrorAs(t, err, &mismatch)
			require.Equal(t, governance.SHA256Hex(zeroed), mismatch.Actual)
			require.Equal(t, digest, mismatch.Expected)
			_, err = h.LoadTrusted(ctx, allow, digest)
			require.NoError(t, err, "the refusal was not kept: the right bytes load")
		})
	}

	again, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(warm))
	require.NoError(t, err)
	defer again.Close(ctx)
	_, err = again.Load(ctx, zeroed, digest)
	var mismatch *host.DigestMismatchError
	require.ErrorAs(t, err, &mismatch, "an untrusted load hashes, warm cache or not")
}
