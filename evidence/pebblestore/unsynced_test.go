package pebblestore

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// TestStore_AppendBatchUnsynced_DurableWithTheNextSync takes power-loss
// images (only synced data kept) around an unsynced batch: before any
// later sync the batch may be lost, but its chain still opens and
// verifies; once a synced append to another chain returns, the unsynced
// batch survives too, because the WAL is a prefix.
func TestStore_AppendBatchUnsynced_DurableWithTheNextSync(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	s, err := Open("db", Options{FS: mem, BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()

	a, b := uuid.New(), uuid.New()
	first := storetest.Next(t, governance.EmptyHead, a)
	_, err = s.Append(ctx, first)
	require.NoError(t, err)
	second := storetest.Next(t, first.Head(), a)
	third := storetest.Next(t, second.Head(), a)
	require.NoError(t, s.AppendBatchUnsynced(ctx, []governance.EvidenceRecord{second, third}))
	head, err := s.Head(ctx, a)
	require.NoError(t, err)
	require.Equal(t, third.Head(), head, "an unsynced batch is the chain's head at once")

	before := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	_, err = s.Append(ctx, storetest.Next(t, governance.EmptyHead, b))
	require.NoError(t, err)
	after := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})

	for name, img := range map[string]vfs.FS{"before": before, "after": after} {
		c, err := Open("db", Options{FS: img, BallastSize: -1})
		require.NoError(t, err, name)
		got, err := c.Read(ctx, a, -1)
		require.NoError(t, err)
		if name == "after" {
			require.Len(t, got, 3, "the later sync made the unsynced batch durable")
		} else {
			require.True(t, len(got) == 1 || len(got) == 3, "all of the batch or none: got %d records", len(got))
		}
		res, err := c.Verify(ctx, a, got[len(got)-1].ChainHash)
		require.NoError(t, err)
		require.True(t, res.Valid, name)
		require.NoError(t, c.Close())
	}
}

// TestStore_AppendBatchUnsynced_ChecksLikeAppendBatch: a conflict is
// refused before anything is applied.
func TestStore_AppendBatchUnsynced_ChecksLikeAppendBatch(t *testing.T) {
	ctx := context.Background()
	s, err := Open("db", Options{FS: vfs.NewMem(), BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	a := uuid.New()
	first := storetest.Next(t, governance.EmptyHead, a)
	require.NoError(t, s.AppendBatchUnsynced(ctx, []governance.EvidenceRecord{first}))
	var conflict *governance.EvidenceConflictError
	require.ErrorAs(t, s.AppendBatchUnsynced(ctx, []governance.EvidenceRecord{first}), &conflict)
	got, err := s.Read(ctx, a, -1)
	require.NoError(t, err)
	require.Len(t, got, 1)
}
