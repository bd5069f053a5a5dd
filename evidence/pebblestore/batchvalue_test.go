package pebblestore

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// appendInBatches appends recs in batches of the given sizes.
func appendInBatches(t *testing.T, s *Store, recs []governance.EvidenceRecord, sizes ...int) {
	t.Helper()
	for _, n := range sizes {
		_, err := s.AppendBatch(context.Background(), recs[:n])
		require.NoError(t, err)
		recs = recs[n:]
	}
	require.Empty(t, recs)
}

// A chain appended in batches of several records keeps one key a batch
// and reads back exactly as appended: from every position, after a
// restart (heads from the last batch value), verified, listed.
func TestStore_BatchValues_ReadBackFromEveryPosition(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	recs := buildChainT(t, 17)
	appendInBatches(t, s, recs, 5, 1, 5, 1, 3, 2)
	require.Equal(t, 6, keysUnder(t, s.db, chainPrefix(recs[0].ChainID)), "one key a batch")
	require.NoError(t, s.Close())

	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	chain := recs[0].ChainID
	h, err := s.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, recs[16].Head(), h)
	for after := int64(-1); after <= 18; after++ {
		got, err := s.Read(ctx, chain, after)
		require.NoError(t, err, "after %d", after)
		want := recs[min(after+1, 17):]
		require.Equal(t, append([]governance.EvidenceRecord{}, want...), got, "after %d", after)
	}
	res, err := s.Verify(ctx, chain, recs[16].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid)
	require.Equal(t, int64(17), res.CheckedRecords)
	chains, err := s.Chains(ctx, uuid.Nil, 10)
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{chain}, chains)
	_, err = s.Append(ctx, storetest.Next(t, h, chain))
	require.NoError(t, err, "appends go on after the batch values")
	_, err = s.AppendBatch(ctx, recs[3:5])
	require.Error(t, err, "records inside a batch value are still refused as duplicates")
}

// Flipping any byte of a stored batch value (two bit patterns) never
// verifies: a record inside fails its own checks, and a flipped count or
// length misframes the value (CONTENT_MISMATCH). Head refuses to trust it.
func TestStore_Verify_FlipEveryByteOfABatchValue(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t, Options{BallastSize: -1})
	recs := buildChainT(t, 7)
	appendInBatches(t, s, recs, 1, 5, 1)
	chain := recs[0].ChainID
	key := recordKey(chain, 1)
	orig, closer, err := s.db.Get(key)
	require.NoError(t, err)
	orig = append([]byte(nil), orig...)
	require.NoError(t, closer.Close())
	require.Equal(t, byte(codecBatch), orig[0])

	for i := range orig {
		for _, mask := range []byte{0x01, 0xa4} {
			name := fmt.Sprintf("byte=%d/mask=%#x", i, mask)
			v := append([]byte(nil), orig...)
			v[i] ^= mask
			require.NoError(t, s.db.Set(key, v, pebble.NoSync))
			res, err := s.Verify(ctx, chain, recs[6].ChainHash)
			require.NoError(t, err, name)
			require.False(t, res.Valid, name)
			require.Contains(t, []governance.VerificationFailureCode{
				governance.ContentMismatch, governance.UnsupportedAlgorithm, governance.BrokenLink,
			}, res.FailureCode, name)
			require.GreaterOrEqual(t, res.CheckedRecords, int64(1), name)
			require.LessOrEqual(t, res.CheckedRecords, int64(5), name)
		}
	}
	require.NoError(t, s.db.Set(key, orig, pebble.Sync))
	res, err := s.Verify(ctx, chain, recs[6].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid, "restored value verifies again")

	// The last value of a chain is its head: a batch there that does not
	// decode leaves the chain without a trusted head.
	require.NoError(t, s.Close())
	s2, dir := openTest(t, Options{BallastSize: -1})
	appendInBatches(t, s2, buildChainT(t, 3), 3)
	other, err := s2.Chains(ctx, uuid.Nil, 1)
	require.NoError(t, err)
	lastKey := recordKey(other[0], 0)
	v, closer, err := s2.db.Get(lastKey)
	require.NoError(t, err)
	v = append([]byte(nil), v...)
	require.NoError(t, closer.Close())
	require.NoError(t, s2.db.Set(lastKey, v[:len(v)-1], pebble.Sync))
	require.NoError(t, s2.Close())
	s3, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s3.Close()
	_, err = s3.Head(ctx, other[0])
	require.ErrorIs(t, err, ErrCorrupt)
}

// Values that only look like batches are refused, never half-read.
func TestCodec_BatchValueFraming(t *testing.T) {
	recs := buildChainT(t, 3)
	good := appendBatchValue(nil, recs)
	require.Len(t, good, batchValueLen(recs))
	var got []governance.EvidenceRecord
	_, err := recordsIn(good, nil, func(r governance.EvidenceRecord) bool { got = append(got, r); return true })
	require.NoError(t, err)
	require.Equal(t, recs, got)

	single := encodeRecord(nil, recs[0])
	frame := func(count int, values ...[]byte) []byte {
		v := binary.AppendUvarint([]byte{codecBatch}, uint64(count))
		for _, x := range values {
			v = append(binary.AppendUvarint(v, uint64(len(x))), x...)
		}
		return v
	}
	require.Equal(t, good, frame(3, encodeRecord(nil, recs[0]), encodeRecord(nil, recs[1]), encodeRecord(nil, recs[2])))
	for name, v := range map[string][]byte{
		"count of one":        frame(1, single),
		"count of zero":       frame(0),
		"no count":            {codecBatch},
		"truncated":           good[:len(good)-1],
		"trailing byte":       append(append([]byte(nil), good...), 0),
		"count one too high":  append(frame(4), good[2:]...),
		"count one too low":   append(frame(2), good[2:]...),
		"a batch in a batch":  frame(2, single, good),
		"length past the end": append(binary.AppendUvarint([]byte{codecBatch, 2}, uint64(len(single)+1)), single...),
	} {
		_, err := recordsIn(v, nil, func(governance.EvidenceRecord) bool { return true })
		require.ErrorIs(t, err, errMalformed, name)
	}
}
