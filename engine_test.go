package govhost_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// A data directory in use fails Open with pebblestore.ErrLocked and leaves
// the holder working (the failed Open cleans up only what it opened).
func TestOpen_DirectoryInUseFailsCleanly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := govhost.Open(ctx, govhost.Options{Dir: dir})
	require.NoError(t, err)
	defer first.Close(ctx)

	second, err := govhost.Open(ctx, govhost.Options{Dir: dir})
	require.ErrorIs(t, err, pebblestore.ErrLocked)
	require.Nil(t, second)

	_, err = first.Evidence.Head(ctx, [16]byte{1})
	require.NoError(t, err)
}

// The host starts while the database opens: a host that refuses its
// configuration fails Open with host.ErrInvalidConfig and closes the
// database opened beside it (the directory opens again at once), and a
// failure on both sides reports both.
func TestOpen_HostFailureClosesTheDatabaseOpenedBesideIt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bad := host.NewConfig().WithCompilationCacheDir(filepath.Join(dir, "wasm-cache")).WithPoolSize(-1)
	eng, err := govhost.Open(ctx, govhost.Options{Dir: dir, Host: &bad})
	require.ErrorIs(t, err, host.ErrInvalidConfig)
	require.Nil(t, eng)

	again, err := govhost.Open(ctx, govhost.Options{Dir: dir})
	require.NoError(t, err, "the failed Open left the database locked")
	defer again.Close(ctx)
	_, err = again.Evidence.Head(ctx, [16]byte{1})
	require.NoError(t, err)

	both, err := govhost.Open(ctx, govhost.Options{Dir: dir, Host: &bad})
	require.ErrorIs(t, err, host.ErrInvalidConfig)
	require.ErrorIs(t, err, pebblestore.ErrLocked)
	require.Nil(t, both)
}

// Close closes the stores and the host: the
// directory opens again at once, the closed engine's host refuses loads,
// and a second Close is a no-op.
func TestClose_ClosesTheStoresAndTheHost(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng, err := govhost.Open(ctx, govhost.Options{Dir: dir})
	require.NoError(t, err)
	destructive, ok := builtin.Lookup("destructive")
	require.True(t, ok)
	require.True(t, eng.Gates.ModuleAvailable(destructive.Digest))
	require.NoError(t, eng.Close(ctx))
	require.NoError(t, eng.Close(ctx))
	_, err = eng.Host.LoadTrusted(ctx, destructive.Wasm, destructive.Digest)
	require.ErrorIs(t, err, host.ErrClosed)

	again, err := govhost.Open(ctx, govhost.Options{Dir: dir})
	require.NoError(t, err, "the closed engine left the database locked")
	require.NoError(t, again.Close(ctx))
}
