package pebblestore

import (
	"context"
	"math"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// openTest opens a store in a fresh directory with a small ballast.
func openTest(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	if opts.BallastSize == 0 {
		opts.BallastSize = 64 << 10
	}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

// harness corrupts records on disk: values are re-encoded and overwritten
// or deleted directly in Pebble, bypassing every check.
func harness() storetest.Harness {
	return storetest.Harness{
		New: func(t *testing.T) evidence.Store {
			s, _ := openTest(t, Options{})
			return s
		},
		Rewrite: func(t *testing.T, es evidence.Store, chain uuid.UUID, seq int64, mutate func(*governance.EvidenceRecord)) {
			s := es.(*Store)
			v, closer, err := s.db.Get(recordKey(chain, seq))
			require.NoError(t, err)
			r, _, err := decodeRecord(v)
			require.NoError(t, err)
			require.NoError(t, closer.Close())
			mutate(&r)
			require.NoError(t, s.db.Set(recordKey(chain, seq), encodeRecord(nil, r), pebble.Sync))
		},
		Delete: func(t *testing.T, es evidence.Store, chain uuid.UUID, seq int64) {
			s := es.(*Store)
			require.NoError(t, s.db.Delete(recordKey(chain, seq), pebble.Sync))
		},
	}
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, harness())
}

func TestStore_Open_ReopenKeepsHeadsAndRecords(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	chain, recs := storetest.Fill(t, s, 7)
	require.NoError(t, s.Close())
	_, err := s.Head(ctx, chain)
	require.ErrorIs(t, err, ErrClosed)

	s2, err := Open(dir, Options{BallastSize: 64 << 10})
	require.NoError(t, err)
	defer s2.Close()
	h, err := s2.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, recs[6].Head(), h)
	got, err := s2.Read(ctx, chain, -1)
	require.NoError(t, err)
	require.Equal(t, recs, got)
	got, err = s2.Read(ctx, chain, math.MaxInt64)
	require.NoError(t, err)
	require.Empty(t, got)
	// The head cache is rebuilt lazily from the persisted head: appends go on.
	_, err = s2.Append(ctx, storetest.Next(t, h, chain))
	require.NoError(t, err)
	_, err = s2.Append(ctx, recs[6])
	var ce *governance.EvidenceConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, governance.ConflictDuplicateRecordID, ce.Kind)
}

// TestStore_Append_HeadCacheEviction: with the head cache bounded to one
// chain, appends that alternate between chains re-read persisted heads and
// still enforce positions.
func TestStore_Append_HeadCacheEviction(t *testing.T) {
	defer func(n int) { maxIdleChains = n }(maxIdleChains)
	maxIdleChains = 1
	ctx := context.Background()
	s, _ := openTest(t, Options{})
	a, b := uuid.New(), uuid.New()
	ha, hb := governance.EmptyHead, governance.EmptyHead
	for range 3 {
		ra, rb := storetest.Next(t, ha, a), storetest.Next(t, hb, b)
		_, err := s.Append(ctx, ra)
		require.NoError(t, err)
		_, err = s.Append(ctx, rb)
		require.NoError(t, err)
		_, err = s.Append(ctx, storetest.Next(t, ha, a))
		var ce *governance.EvidenceConflictError
		require.ErrorAs(t, err, &ce, "a stale head is refused after eviction")
		ha, hb = ra.Head(), rb.Head()
	}
	require.LessOrEqual(t, len(s.chains), 1)
	for chain, h := range map[uuid.UUID]governance.ChainHead{a: ha, b: hb} {
		res, err := s.Verify(ctx, chain, h.Hash)
		require.NoError(t, err)
		require.True(t, res.Valid)
	}
}

func TestStore_Chains(t *testing.T) {
	storetest.RunChainLister(t, harness())
}
