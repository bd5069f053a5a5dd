package pebblestore

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// writeFormatV1 turns the store in dir back into what a format 1 build left:
// the format 1 marker and a head key per chain (<seq 8 BE><chain hash>),
// written with the records' batches then.
func writeFormatV1(t *testing.T, dir string, heads map[uuid.UUID]governance.ChainHead) {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	require.NoError(t, err)
	b := db.NewBatch()
	for chain, h := range heads {
		key := append([]byte{'e', '/', tagHead}, chain[:]...)
		require.NoError(t, b.Set(key, append(binary.BigEndian.AppendUint64(nil, uint64(h.Sequence)), h.Hash...), nil))
	}
	require.NoError(t, b.Set(formatKey, []byte(formatMarkerV1), nil))
	require.NoError(t, b.Commit(pebble.Sync))
	require.NoError(t, db.Close())
}

// keysUnder counts the keys starting with prefix.
func keysUnder(t *testing.T, db *pebble.DB, prefix []byte) int {
	t.Helper()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	require.NoError(t, err)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	require.NoError(t, it.Close())
	return n
}

// A store a format 1 build wrote (heads kept in e/h keys) opens with every
// chain read as before: heads, listing, verification, and appends that
// continue each chain. The keyspace is upgraded once, so a format 1 build
// opening it afterwards refuses it instead of trusting stale heads.
func TestOpen_ReadsAndUpgradesFormat1(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	chainA, recsA := storetest.Fill(t, s, 3)
	chainB, recsB := storetest.Fill(t, s, 1)
	require.NoError(t, s.Close())
	writeFormatV1(t, dir, map[uuid.UUID]governance.ChainHead{
		chainA: recsA[2].Head(), chainB: recsB[0].Head(),
	})

	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	for chain, want := range map[uuid.UUID]governance.ChainHead{chainA: recsA[2].Head(), chainB: recsB[0].Head()} {
		h, err := s.Head(ctx, chain)
		require.NoError(t, err)
		require.Equal(t, want, h)
		res, err := s.Verify(ctx, chain, want.Hash)
		require.NoError(t, err)
		require.True(t, res.Valid)
	}
	chains, err := s.Chains(ctx, uuid.Nil, 10)
	require.NoError(t, err)
	require.ElementsMatch(t, []uuid.UUID{chainA, chainB}, chains)

	next := storetest.Next(t, recsA[2].Head(), chainA)
	_, err = s.Append(ctx, next)
	require.NoError(t, err)
	stale := storetest.Next(t, recsA[2].Head(), chainA) // built on the head before next
	_, err = s.Append(ctx, stale)
	require.Error(t, err, "the head after the upgrade is the last record, not the old e/h value")

	v, closer, err := s.DB().Get(formatKey)
	require.NoError(t, err)
	require.Equal(t, formatMarker, string(v), "a format 1 build refuses this marker (ErrUnsupportedFormat)")
	require.NoError(t, closer.Close())
	require.Zero(t, keysUnder(t, s.DB(), []byte{'e', '/', tagHead}), "format 1's head keys are deleted")
}

// Heads and the chain list come from the records alone: after a restart
// (empty head cache) each chain's head is its last record, also past the
// listing's page boundary.
func TestReopen_HeadsAndChainsFromRecords(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	want := map[uuid.UUID]governance.ChainHead{}
	for n := 1; n <= 5; n++ {
		chain, recs := storetest.Fill(t, s, n)
		want[chain] = recs[n-1].Head()
	}
	require.NoError(t, s.Close())

	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	var listed []uuid.UUID
	for after := uuid.Nil; ; {
		page, err := s.Chains(ctx, after, 2)
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		listed, after = append(listed, page...), page[len(page)-1]
	}
	require.Len(t, listed, len(want))
	for _, chain := range listed {
		h, err := s.Head(ctx, chain)
		require.NoError(t, err)
		require.Equal(t, want[chain], h)
	}
	h, err := s.Head(ctx, uuid.New())
	require.NoError(t, err)
	require.Equal(t, governance.EmptyHead, h, "a chain never appended to")
}

// A chain whose last record no longer decodes has no trustworthy head:
// Head and Append fail with ErrCorrupt (nothing is appended after it), while
// Verify reports the record as tampered.
func TestHead_CorruptLastRecordIsAnError(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	chain, recs := storetest.Fill(t, s, 3)
	require.NoError(t, s.DB().Set(recordKey(chain, 2), []byte{codecVersion, 1, 2, 3}, pebble.Sync))
	require.NoError(t, s.Close())

	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Head(ctx, chain)
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = s.Append(ctx, storetest.Next(t, recs[2].Head(), chain))
	require.ErrorIs(t, err, ErrCorrupt)
	res, err := s.Verify(ctx, chain, recs[2].ChainHash)
	require.NoError(t, err)
	require.Equal(t, governance.ContentMismatch, res.FailureCode)
	require.Equal(t, int64(2), res.CheckedRecords)
}

// A store a format 2 build wrote (one value a record) opens as before and
// is marked format 3 once, so a format 2 build, which would misread the
// batch values appended from now on, refuses it.
func TestOpen_UpgradesFormat2(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	chain, recs := storetest.Fill(t, s, 4) // one record a batch: format 2's values
	require.NoError(t, s.Close())
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	require.NoError(t, err)
	require.NoError(t, db.Set(formatKey, []byte(formatMarkerV2), pebble.Sync))
	require.NoError(t, db.Close())

	s, err = Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	v, closer, err := s.DB().Get(formatKey)
	require.NoError(t, err)
	require.Equal(t, formatMarker, string(v), "a format 2 build refuses this marker (ErrUnsupportedFormat)")
	require.NoError(t, closer.Close())
	got, err := s.Read(ctx, chain, -1)
	require.NoError(t, err)
	require.Equal(t, recs, got)
	next := []governance.EvidenceRecord{storetest.Next(t, recs[3].Head(), chain)}
	next = append(next, storetest.Next(t, next[0].Head(), chain))
	_, err = s.AppendBatch(ctx, next)
	require.NoError(t, err)
	res, err := s.Verify(ctx, chain, next[1].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid)
	require.Equal(t, int64(6), res.CheckedRecords)
}
