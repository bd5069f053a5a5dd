package pgstore

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgtest"
)

// TestStore_TwoServersThroughRestarts is two stores with their own pools on
// one database — what two govhost servers are to PostgreSQL: pgstore holds
// no in-process chain lock — with 32 writers each, appending batches of
// one or two records to chains of their own and to chains they share,
// while the database is stopped (fast, then immediate shutdown) and
// started again. Afterwards: every chain verifies with no gap and no
// duplicate; every acknowledged record is stored where its receipt says;
// no batch is half-written; every refusal was typed (a conflict, or the
// database unavailable); and both stores appended again after the last
// restart without being reopened.
func TestStore_TwoServersThroughRestarts(t *testing.T) {
	srv, err := pgtest.Start(pgtest.Options{})
	pgtest.Require(t, err)
	defer srv.Close()
	dsn := pgtest.SchemaOn(t, srv)
	var stores [2]*Store
	for i := range stores {
		stores[i], err = Open(ctx, dsn, Options{MaxConns: 16, ReadBackTimeout: 30 * time.Second})
		require.NoError(t, err)
		defer stores[i].Close()
	}
	shared := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}

	type attempt struct {
		records []governance.EvidenceRecord
		acked   bool
	}
	var (
		mu                              sync.Mutex
		attempts                        []attempt
		conflicts, unavailable, untyped atomic.Int64
		restarted                       atomic.Bool
		ackedAfterRestart               [2]atomic.Int64
		stop                            = make(chan struct{})
		wg                              sync.WaitGroup
	)
	for w := 0; w < 64; w++ {
		s, server := stores[w%2], w%2
		own := uuid.New()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 17))
			for {
				select {
				case <-stop:
					return
				default:
				}
				chain := own
				if rng.IntN(10) < 3 {
					chain = shared[rng.IntN(len(shared))]
				}
				head, err := s.Head(ctx, chain)
				if err != nil {
					assert.ErrorIs(t, err, governance.ErrStoreUnavailable)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				batch := []governance.EvidenceRecord{storetest.Next(t, head, chain)}
				if rng.IntN(2) == 0 {
					batch = append(batch, storetest.Next(t, batch[0].Head(), chain))
				}
				rcs, err := s.AppendBatch(ctx, batch)
				var ce *governance.EvidenceConflictError
				switch {
				case err == nil:
					assert.Len(t, rcs, len(batch))
					for i, rc := range rcs {
						assert.Equal(t, governance.ReceiptFor(batch[i]), rc)
					}
					if restarted.Load() {
						ackedAfterRestart[server].Add(1)
					}
				case errors.As(err, &ce):
					conflicts.Add(1)
				case errors.Is(err, governance.ErrStoreUnavailable):
					unavailable.Add(1)
					time.Sleep(20 * time.Millisecond)
				default:
					untyped.Add(1)
					t.Errorf("untyped append error: %v", err)
				}
				mu.Lock()
				attempts = append(attempts, attempt{records: batch, acked: err == nil})
				mu.Unlock()
			}
		}()
	}

	time.Sleep(time.Second)
	require.NoError(t, srv.Stop("fast"))
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, srv.Restart())
	time.Sleep(time.Second)
	require.NoError(t, srv.Stop("immediate"))
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, srv.Restart())
	restarted.Store(true)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()

	// What is stored, read afresh.
	stored := map[uuid.UUID]governance.EvidenceRecord{}
	chains := map[uuid.UUID]bool{}
	for _, a := range attempts {
		chains[a.records[0].ChainID] = true
	}
	for chain := range chains {
		head, err := stores[0].Head(ctx, chain)
		require.NoError(t, err)
		if head.IsEmpty() {
			continue
		}
		res, err := stores[1].Verify(ctx, chain, head.Hash)
		require.NoError(t, err)
		require.True(t, res.Valid, "chain %s: %+v", chain, res)
		require.Equal(t, head.Sequence+1, res.CheckedRecords, "no gap, no duplicate")
		recs, err := stores[0].Read(ctx, chain, -1)
		require.NoError(t, err)
		for _, r := range recs {
			_, dup := stored[r.RecordID]
			require.False(t, dup, "record %s stored twice", r.RecordID)
			stored[r.RecordID] = r
		}
	}
	acked := 0
	for _, a := range attempts {
		n := 0
		for _, r := range a.records {
			if got, ok := stored[r.RecordID]; ok {
				require.Equal(t, r.ChainHash, got.ChainHash)
				n++
			}
		}
		if a.acked {
			acked++
			require.Equal(t, len(a.records), n, "an acknowledged batch is stored whole")
		} else {
			require.Contains(t, []int{0, len(a.records)}, n, "a batch is stored whole or not at all")
		}
	}
	t.Logf("%d attempts: %d acknowledged, %d conflicts, %d unavailable; after the last restart %d + %d acknowledged",
		len(attempts), acked, conflicts.Load(), unavailable.Load(), ackedAfterRestart[0].Load(), ackedAfterRestart[1].Load())
	require.Zero(t, untyped.Load())
	require.NotZero(t, conflicts.Load(), "the shared chains saw both servers race")
	require.NotZero(t, unavailable.Load(), "the stops were seen")
	for i := range ackedAfterRestart {
		require.NotZero(t, ackedAfterRestart[i].Load(), "store %d recovered without reopening", i)
	}
}
