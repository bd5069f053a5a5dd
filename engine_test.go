package govhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/evidence/pebblestore"
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
