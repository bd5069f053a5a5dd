package pebblestore

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// TestStore_PowerLoss takes crash images of an in-memory disk while 8
// writers append, keeping only synced data (and random parts of unsynced
// data): a SIGKILL keeps the OS page cache, a power cut does not. Every
// record acknowledged before the image is in it, and every chain verifies.
func TestStore_PowerLoss(t *testing.T) { powerLoss(t, 8, 200) }

// TestStore_PowerLoss_GroupCommit: the same with 64 writers (64 governed
// tasks), each appending batches of one to five records, so that WAL syncs
// carry many chains' batches at once: the images fall between a group's
// write and its sync as well as anywhere else.
func TestStore_PowerLoss_GroupCommit(t *testing.T) { powerLoss(t, groupAppenders, 40) }

func powerLoss(t *testing.T, writers, perWriter int) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	s, err := Open("db", Options{FS: mem, BallastSize: 64 << 10})
	require.NoError(t, err)
	defer s.Close()

	var mu sync.Mutex
	acked := map[uuid.UUID][]governance.EvidenceRecord{}
	var stop atomic.Bool
	var total atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		chain := uuid.New()
		wg.Add(1)
		go func() {
			defer wg.Done()
			head := governance.EmptyHead
			for n := 0; n < perWriter && !stop.Load(); {
				// The 8-writer run appends one record at a time; with more
				// writers, batches of 1-5 records (a call's shape).
				batch := make([]governance.EvidenceRecord, 1+(n+w)%5*btoi(writers > 8))
				for i := range batch {
					batch[i] = storetest.Next(t, head, chain)
					head = batch[i].Head()
				}
				if _, err := s.AppendBatch(ctx, batch); err != nil {
					panic(err)
				}
				mu.Lock()
				acked[chain] = append(acked[chain], batch...)
				mu.Unlock()
				total.Add(int64(len(batch)))
				n += len(batch)
			}
		}()
	}

	rng := rand.New(rand.NewPCG(1, 42))
	for i := range 30 {
		// Spread the images over the run: one per ~50 appends.
		for total.Load() < int64(i*writers*perWriter/30) && total.Load() < int64(writers*perWriter) {
			time.Sleep(100 * time.Microsecond)
		}
		mu.Lock()
		want := map[uuid.UUID]int{}
		for c, recs := range acked {
			want[c] = len(recs)
		}
		mu.Unlock()
		clone := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: []int{0, 50, 100}[i%3], RNG: rng})

		c, err := Open("db", Options{FS: clone, BallastSize: -1})
		require.NoError(t, err, "image %d opens", i)
		for chain, n := range want {
			got, err := c.Read(ctx, chain, -1)
			require.NoError(t, err)
			require.GreaterOrEqual(t, len(got), n, "image %d chain %s: acknowledged records lost", i, chain)
			mu.Lock()
			require.Equal(t, acked[chain][:n], got[:n])
			mu.Unlock()
			head, err := c.Head(ctx, chain)
			require.NoError(t, err)
			require.Equal(t, int64(len(got)-1), head.Sequence, "persisted head agrees with the records")
			res, err := c.Verify(ctx, chain, head.Hash)
			require.NoError(t, err)
			require.True(t, res.Valid, "image %d chain %s: %+v", i, chain, res)
		}
		require.NoError(t, c.Close())
	}
	stop.Store(true)
	wg.Wait()
}
