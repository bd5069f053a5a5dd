package pebblestore

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// The group commit path: many appenders, to many chains, waiting on one
// WAL sync. These tests hold a WAL write or sync until every appender has
// applied its batch, so that all of them wait on the same group.

// groupAppenders is how many tasks append at once, as in the 64-task
// benchmark.
const groupAppenders = 64

// heldWAL holds the first WAL operation of the selected kinds after arm
// until release, then returns fail from it (nil: it succeeds). Every later
// WAL sync is counted.
type heldWAL struct {
	kinds   func(errorfs.OpKind) bool
	fail    error
	armed   atomic.Bool
	held    chan struct{} // closed when an operation is being held
	release chan struct{}
	once    sync.Once
	syncs   atomic.Int64
}

func newHeldWAL(kinds func(errorfs.OpKind) bool, fail error) *heldWAL {
	return &heldWAL{kinds: kinds, fail: fail, held: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldWAL) MaybeError(op errorfs.Op) error {
	if !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	if isSync(op.Kind) {
		h.syncs.Add(1)
	}
	if !h.armed.Load() || !h.kinds(op.Kind) {
		return nil
	}
	first := false
	h.once.Do(func() { first = true })
	if !first {
		return h.fail
	}
	close(h.held)
	<-h.release
	return h.fail
}

func (h *heldWAL) String() string { return "held WAL operation" }

// appendGroup fills one record into each of n chains, then arms h and
// appends a batch of two records to every chain at once. It waits until
// every batch is applied (visible in its chain's head, its WAL sync
// pending behind the held operation), releases h and returns each
// appender's result and the records acknowledged before.
func appendGroup(t *testing.T, s *Store, h *heldWAL, n int) (errs []error, acked map[uuid.UUID][]governance.EvidenceRecord) {
	t.Helper()
	ctx := context.Background()
	acked = map[uuid.UUID][]governance.EvidenceRecord{}
	batches := map[uuid.UUID][]governance.EvidenceRecord{}
	for range n {
		chain, recs := storetest.Fill(t, s, 1)
		acked[chain] = recs
		first := storetest.Next(t, recs[0].Head(), chain)
		batches[chain] = []governance.EvidenceRecord{first, storetest.Next(t, first.Head(), chain)}
	}
	h.armed.Store(true)
	errs = make([]error, 0, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for chain, batch := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rcs, err := s.AppendBatch(ctx, batch)
			if err == nil {
				t.Errorf("chain %s: batch acknowledged (%v) although its WAL sync failed", chain, rcs)
			}
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}()
	}
	select {
	case <-h.held:
	case <-time.After(time.Minute):
		t.Fatal("no WAL operation reached the disk")
	}
	for chain, batch := range batches {
		for {
			head, err := s.Head(ctx, chain)
			require.NoError(t, err)
			if head == batch[1].Head() {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(h.release)
	wg.Wait()
	return errs, acked
}

// TestStore_GroupCommit_FailedSyncFailsEveryWaiter: a WAL sync fails while
// 64 appenders, on 64 chains, wait on it. Every one of them gets the typed
// failure (ErrIO, and ErrFenced: durability unknown), none a receipt; the
// store takes no further append; after a restart every record
// acknowledged before is there and every chain verifies, each failed
// batch there whole or not at all.
func TestStore_GroupCommit_FailedSyncFailsEveryWaiter(t *testing.T) {
	mem := vfs.NewCrashableMem()
	h := newHeldWAL(isSync, errorfs.ErrInjected)
	s, err := Open("db", Options{FS: errorfs.Wrap(mem, h), BallastSize: -1})
	require.NoError(t, err)
	errs, acked := appendGroup(t, s, h, groupAppenders)
	require.Len(t, errs, groupAppenders)
	for _, err := range errs {
		require.ErrorIs(t, err, ErrIO)
		require.ErrorIs(t, err, ErrFenced)
		require.ErrorIs(t, err, errorfs.ErrInjected, "the disk's own error is kept")
	}
	_, err = s.Append(context.Background(), storetest.Next(t, governance.EmptyHead, uuid.New()))
	require.ErrorIs(t, err, ErrFenced)
	requireGroupRecovers(t, mem, acked)
	require.ErrorIs(t, s.Close(), errorfs.ErrInjected)
}

// TestStore_GroupCommit_FullDiskFailsEveryWaiter: the WAL write carrying
// the group hits ENOSPC (no ballast to release): every appender of the
// group gets ErrDiskFull with the ENOSPC, none a receipt, and nothing
// acknowledged before is lost.
func TestStore_GroupCommit_FullDiskFailsEveryWaiter(t *testing.T) {
	mem := vfs.NewCrashableMem()
	h := newHeldWAL(func(k errorfs.OpKind) bool { return k == errorfs.OpFileWrite }, syscall.ENOSPC)
	s, err := Open("db", Options{FS: errorfs.Wrap(mem, h), BallastSize: -1})
	require.NoError(t, err)
	errs, acked := appendGroup(t, s, h, groupAppenders)
	require.Len(t, errs, groupAppenders)
	for _, err := range errs {
		require.ErrorIs(t, err, ErrDiskFull)
		require.ErrorIs(t, err, syscall.ENOSPC)
	}
	requireGroupRecovers(t, mem, acked)
	_ = s.Close()
}

// requireGroupRecovers opens crash images of mem (synced data only, half
// of the rest, all of it): every acknowledged record is there, every
// chain verifies against its persisted head, and the batch that failed
// after them is there whole or not at all.
func requireGroupRecovers(t *testing.T, mem *vfs.MemFS, acked map[uuid.UUID][]governance.EvidenceRecord) {
	t.Helper()
	ctx := context.Background()
	for _, unsynced := range []int{0, 50, 100} {
		clone := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: unsynced, RNG: rand.New(rand.NewPCG(uint64(unsynced), 9))})
		c, err := Open("db", Options{FS: clone, BallastSize: -1})
		require.NoError(t, err)
		for chain, want := range acked {
			got, err := c.Read(ctx, chain, -1)
			require.NoError(t, err)
			require.Contains(t, []int{len(want), len(want) + 2}, len(got), "chain %s: acknowledged records kept, the failed batch whole or absent", chain)
			require.Equal(t, want, got[:len(want)])
			head, err := c.Head(ctx, chain)
			require.NoError(t, err)
			require.Equal(t, got[len(got)-1].Head(), head)
			res, err := c.Verify(ctx, chain, head.Hash)
			require.NoError(t, err)
			require.True(t, res.Valid, "chain %s: %+v", chain, res)
		}
		require.NoError(t, c.Close())
	}
}

// TestStore_GroupCommit_AppendersShareSyncs: 64 appenders, each appending
// ten batches to its own chain while WAL syncs are slow (5 ms, a loaded
// disk): the appends share syncs, so there are several times fewer WAL
// syncs than acknowledged batches. Without group commit each batch would
// cost a sync of its own.
func TestStore_GroupCommit_AppendersShareSyncs(t *testing.T) {
	var syncs atomic.Int64
	slow := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if isSync(op.Kind) && strings.HasSuffix(op.Path, ".log") {
			syncs.Add(1)
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	})
	s, err := Open("db", Options{FS: errorfs.Wrap(vfs.NewMem(), slow), BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	const batches = 10
	chains := make([][]governance.EvidenceRecord, groupAppenders)
	for i := range chains {
		chains[i] = buildChainT(t, batches)
	}
	before := syncs.Load()
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, recs := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range recs {
				if _, err := s.Append(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n := syncs.Load() - before
	t.Logf("%d acknowledged batches, %d WAL syncs", groupAppenders*batches, n)
	require.LessOrEqual(t, n*4, int64(groupAppenders*batches), "64 appenders share WAL syncs")
	for _, recs := range chains {
		head, err := s.Head(ctx, recs[0].ChainID)
		require.NoError(t, err)
		res, err := s.Verify(ctx, recs[0].ChainID, head.Hash)
		require.NoError(t, err)
		require.True(t, res.Valid)
		require.Equal(t, int64(batches-1), res.CheckedRecords-1)
	}
}
