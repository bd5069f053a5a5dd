package pebblestore

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// injector fails the operations pred selects while on.
type injector struct {
	on   atomic.Bool
	pred func(op errorfs.Op) error
}

func (i *injector) MaybeError(op errorfs.Op) error {
	if !i.on.Load() {
		return nil
	}
	return i.pred(op)
}

func (i *injector) String() string { return "test injector" }

func isSync(k errorfs.OpKind) bool {
	return k == errorfs.OpFileSync || k == errorfs.OpFileSyncData || k == errorfs.OpFileSyncTo
}

func onWAL(kinds func(errorfs.OpKind) bool, err error) func(errorfs.Op) error {
	return func(op errorfs.Op) error {
		if kinds(op.Kind) && strings.HasSuffix(op.Path, ".log") {
			return err
		}
		return nil
	}
}

// requireRecovers reopens a crash image of mem (only what was synced, or
// half of the rest, or everything) and checks the chain holds every acknowledged record and
// verifies; the failed append may be there whole or not at all.
func requireRecovers(t *testing.T, mem *vfs.MemFS, chain uuid.UUID, acked []governance.EvidenceRecord) {
	t.Helper()
	ctx := context.Background()
	for _, unsynced := range []int{0, 50, 100} {
		clone := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: unsynced, RNG: rand.New(rand.NewPCG(uint64(unsynced), 1))})
		s, err := Open("db", Options{FS: clone, BallastSize: -1})
		require.NoError(t, err)
		head, err := s.Head(ctx, chain)
		require.NoError(t, err)
		require.GreaterOrEqual(t, head.Sequence, acked[len(acked)-1].Sequence)
		got, err := s.Read(ctx, chain, -1)
		require.NoError(t, err)
		require.Equal(t, acked, got[:len(acked)])
		res, err := s.Verify(ctx, chain, head.Hash)
		require.NoError(t, err)
		require.True(t, res.Valid, "%+v", res)
		require.NoError(t, s.Close())
	}
}

func TestStore_Append_FailedWALWriteOrSync(t *testing.T) {
	cases := map[string]func(errorfs.OpKind) bool{
		"sync":  isSync,
		"write": func(k errorfs.OpKind) bool { return k == errorfs.OpFileWrite || k == errorfs.OpFileWriteAt },
	}
	for name, kinds := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			mem := vfs.NewCrashableMem()
			inj := &injector{pred: onWAL(kinds, errorfs.ErrInjected)}
			s, err := Open("db", Options{FS: errorfs.Wrap(mem, inj), BallastSize: -1})
			require.NoError(t, err)
			chain, acked := storetest.Fill(t, s, 5)

			inj.on.Store(true)
			next := storetest.Next(t, acked[4].Head(), chain)
			rc, err := s.Append(ctx, next)
			require.ErrorIs(t, err, ErrIO)
			require.ErrorIs(t, err, ErrFenced, "durability unknown: the store fences itself")
			require.Zero(t, rc, "no receipt")

			// Nothing more is acknowledged on this store, on any chain.
			_, err = s.Append(ctx, storetest.Next(t, governance.EmptyHead, uuid.New()))
			require.ErrorIs(t, err, ErrFenced)
			_, err = s.Head(ctx, chain)
			require.ErrorIs(t, err, ErrFenced)
			_, err = s.Verify(ctx, chain, acked[4].ChainHash)
			require.ErrorIs(t, err, ErrFenced)

			// The process "restarts" from what the disk holds.
			requireRecovers(t, mem, chain, acked)
			// Closing the fenced store reports the failure and releases the
			// directory: reopening it in this process works.
			require.ErrorIs(t, s.Close(), errorfs.ErrInjected)
			inj.on.Store(false)
			s, err = Open("db", Options{FS: errorfs.Wrap(mem, inj), BallastSize: -1})
			require.NoError(t, err)
			defer s.Close()
			head, err := s.Head(ctx, chain)
			require.NoError(t, err)
			require.GreaterOrEqual(t, head.Sequence, acked[4].Sequence)
			res, err := s.Verify(ctx, chain, head.Hash)
			require.NoError(t, err)
			require.True(t, res.Valid)
		})
	}
}

// TestStore_Append_DiskFullWithBallast: the first ENOSPC releases the
// ballast and the write is retried (that append succeeds); later appends
// get ErrDiskFull, head unchanged, until space comes back.
func TestStore_Append_DiskFullWithBallast(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	var full, walFull atomic.Bool
	inj := &injector{pred: func(op errorfs.Op) error {
		switch {
		case strings.HasSuffix(op.Path, ballastName) && full.Load() &&
			(op.Kind == errorfs.OpCreate || op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFilePreallocate):
			return syscall.ENOSPC
		case strings.HasSuffix(op.Path, ".log") && op.Kind == errorfs.OpFileWrite && walFull.CompareAndSwap(true, false):
			// The disk fills up under this WAL write; deleting the
			// ballast frees room for the retry.
			return syscall.ENOSPC
		}
		return nil
	}}
	inj.on.Store(true)
	s, err := Open("db", Options{FS: errorfs.Wrap(mem, inj), BallastSize: 64 << 10})
	require.NoError(t, err)
	defer s.Close()
	chain, recs := storetest.Fill(t, s, 3)
	_, err = mem.Stat("db/" + ballastName)
	require.NoError(t, err, "Open reserved room")

	full.Store(true)
	walFull.Store(true)
	r := storetest.Next(t, recs[2].Head(), chain)
	_, err = s.Append(ctx, r)
	require.NoError(t, err, "the write that hit ENOSPC is retried in the released room")
	recs = append(recs, r)
	_, err = mem.Stat("db/" + ballastName)
	require.Error(t, err, "ballast released")

	r = storetest.Next(t, recs[3].Head(), chain)
	_, err = s.Append(ctx, r)
	require.ErrorIs(t, err, ErrDiskFull)
	require.NotErrorIs(t, err, ErrFenced, "nothing was written: the store stays usable")
	h, err := s.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, recs[3].Head(), h)
	res, err := s.Verify(ctx, chain, h.Hash)
	require.NoError(t, err)
	require.True(t, res.Valid, "reads work on a full disk")

	full.Store(false) // the operator freed space
	_, err = s.Append(ctx, r)
	require.NoError(t, err)
	_, err = mem.Stat("db/" + ballastName)
	require.NoError(t, err, "ballast re-created before appends resumed")
}

// TestStore_Append_DiskFullWithoutBallast: with no room to release, the
// failed WAL write is reported as a full disk, never as success.
func TestStore_Append_DiskFullWithoutBallast(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewCrashableMem()
	inj := &injector{pred: onWAL(func(k errorfs.OpKind) bool { return k == errorfs.OpFileWrite }, syscall.ENOSPC)}
	s, err := Open("db", Options{FS: errorfs.Wrap(mem, inj), BallastSize: -1})
	require.NoError(t, err)
	chain, acked := storetest.Fill(t, s, 2)
	inj.on.Store(true)
	_, err = s.Append(ctx, storetest.Next(t, acked[1].Head(), chain))
	require.ErrorIs(t, err, ErrDiskFull)
	require.ErrorIs(t, err, syscall.ENOSPC)
	requireRecovers(t, mem, chain, acked)
}

// TestStore_Verify_ReadErrorIsNotTampering: a failing disk read during
// Verify or Read is an I/O error, never a verification result.
func TestStore_Verify_ReadErrorIsNotTampering(t *testing.T) {
	ctx := context.Background()
	mem := vfs.NewMem()
	inj := &injector{pred: func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileReadAt && strings.HasSuffix(op.Path, ".sst") {
			return errorfs.ErrInjected
		}
		return nil
	}}
	fs := errorfs.Wrap(mem, inj)
	s, err := Open("db", Options{FS: fs, BallastSize: -1})
	require.NoError(t, err)
	// Enough records for many data blocks: Pebble's background table
	// stats loader may cache one or two at open.
	chain := uuid.New()
	recs := make([]governance.EvidenceRecord, 0, 2000)
	head := governance.EmptyHead
	for range cap(recs) {
		recs = append(recs, storetest.Next(t, head, chain))
		head = recs[len(recs)-1].Head()
	}
	for i := 0; i < len(recs); i += 200 {
		_, err := s.AppendBatch(ctx, recs[i:i+200])
		require.NoError(t, err)
	}
	require.NoError(t, s.db.Flush(), "records move from the WAL to an sstable")
	require.NoError(t, s.Close())

	// Each check on a freshly opened store: nothing in its block cache.
	reopen := func() *Store {
		s, err := Open("db", Options{FS: fs, BallastSize: -1})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	s = reopen()
	inj.on.Store(true)
	res, err := s.Verify(ctx, chain, recs[1999].ChainHash)
	require.ErrorIs(t, err, ErrIO)
	require.ErrorIs(t, err, errorfs.ErrInjected)
	require.Zero(t, res)
	inj.on.Store(false)
	require.NoError(t, s.Close())

	s = reopen()
	inj.on.Store(true)
	_, err = s.Read(ctx, chain, -1)
	require.ErrorIs(t, err, ErrIO)

	inj.on.Store(false)
	res, err = s.Verify(ctx, chain, recs[1999].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid)
}
