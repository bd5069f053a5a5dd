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

// span is a byte range of an encoded record value and the failure code
// Verify must report when any byte in it is flipped.
type span struct {
	field      string
	start, end int
	code       governance.VerificationFailureCode
}

// valueSpans maps the encoding of r in codec (codec.go) to the expected
// codes: sequence and previous hash are links, hash_algorithm and the
// codec byte are algorithms, everything else (length prefixes included:
// the value no longer decodes) is content.
func valueSpans(r governance.EvidenceRecord, codec byte) []span {
	spans := []span{
		{"format", 0, 1, governance.UnsupportedAlgorithm},
		{"record_id", 1, 17, governance.ContentMismatch},
		{"chain_id", 17, 33, governance.ContentMismatch},
		{"sequence", 33, 41, governance.BrokenLink},
		{"policy_id", 41, 57, governance.ContentMismatch},
		{"flags", 57, 58, governance.ContentMismatch},
		{"operation_id", 58, 74, governance.ContentMismatch},
		{"supersedes_record_id", 74, 90, governance.ContentMismatch},
		{"created_at", 90, 98, governance.ContentMismatch},
	}
	type field struct {
		name string
		v    string
		code governance.VerificationFailureCode
	}
	fields := []field{
		{"record_type", string(r.RecordType), governance.ContentMismatch},
		{"policy_version", r.PolicyVersion, governance.ContentMismatch},
		{"hash_algorithm", r.HashAlgorithm, governance.UnsupportedAlgorithm},
		{"previous_chain_hash", r.PreviousChainHash, governance.BrokenLink},
		{"payload_digest", r.PayloadDigest, governance.ContentMismatch},
		{"chain_hash", r.ChainHash, governance.ContentMismatch},
		{"payload_json", r.PayloadJSON, governance.ContentMismatch},
	}
	off := fixedLen
	if codec == codecV2 {
		spans = append(spans,
			span{"payload_digest", 98, 130, governance.ContentMismatch},
			span{"chain_hash", 130, 162, governance.ContentMismatch},
			span{"previous_chain_hash", 162, 194, governance.BrokenLink})
		off = fixedLenV2
		fields = []field{fields[0], fields[1], fields[2], fields[6]}
	}
	for _, f := range fields {
		n := len(binary.AppendUvarint(nil, uint64(len(f.v))))
		spans = append(spans, span{f.name + " length", off, off + n, governance.ContentMismatch})
		spans = append(spans, span{f.name, off + n, off + n + len(f.v), f.code})
		off += n + len(f.v)
	}
	return spans
}

// TestStore_Verify_FlipEveryByte flips each byte of a stored record (two
// different bit patterns) and checks Verify names the right code, the
// record, and the records verified before it: for the codec the store
// writes (2) and for codec 1, which format 1 stores hold.
func TestStore_Verify_FlipEveryByte(t *testing.T) {
	for _, codec := range []byte{codecV2, codecVersion} {
		t.Run(fmt.Sprintf("codec=%d", codec), func(t *testing.T) { testFlipEveryByte(t, codec) })
	}
}

func testFlipEveryByte(t *testing.T, codec byte) {
	ctx := context.Background()
	s, _ := openTest(t, Options{BallastSize: -1})
	chain, recs := storetest.Fill(t, s, 5)
	key := recordKey(chain, 2)
	orig, closer, err := s.db.Get(key)
	require.NoError(t, err)
	orig = append([]byte(nil), orig...)
	require.NoError(t, closer.Close())
	require.Equal(t, byte(codecV2), orig[0], "the store writes codec 2")
	if codec == codecVersion {
		orig = encodeRecordV1(nil, recs[2])
		require.NoError(t, s.db.Set(key, orig, pebble.Sync))
		res, err := s.Verify(ctx, chain, recs[4].ChainHash)
		require.NoError(t, err)
		require.True(t, res.Valid, "a codec 1 value verifies")
	}
	spans := valueSpans(recs[2], codec)
	require.Equal(t, len(orig), spans[len(spans)-1].end, "spans cover the value")

	for _, sp := range spans {
		for i := sp.start; i < sp.end; i++ {
			for _, mask := range []byte{0x01, 0xa4} {
				name := fmt.Sprintf("%s/byte=%d/mask=%#x", sp.field, i, mask)
				v := append([]byte(nil), orig...)
				v[i] ^= mask
				require.NoError(t, s.db.Set(key, v, pebble.NoSync))
				res, err := s.Verify(ctx, chain, recs[4].ChainHash)
				require.NoError(t, err, name)
				require.False(t, res.Valid, name)
				require.Equal(t, sp.code, res.FailureCode, name)
				require.Equal(t, int64(2), res.CheckedRecords, name)
				require.Equal(t, recs[1].ChainHash, res.VerifiedHead, name)
				wantID := recs[2].RecordID
				if sp.field == "record_id" {
					copy(wantID[:], v[1:17])
				}
				require.Equal(t, uuid.NullUUID{UUID: wantID, Valid: true}, res.FailedRecordID, name)
			}
		}
	}
	require.NoError(t, s.db.Set(key, orig, pebble.Sync))
	res, err := s.Verify(ctx, chain, recs[4].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid, "restored value verifies again")
}

func TestStore_Verify_TamperedKeys(t *testing.T) {
	ctx := context.Background()
	get := func(t *testing.T, s *Store, k []byte) []byte {
		v, closer, err := s.db.Get(k)
		require.NoError(t, err)
		defer closer.Close()
		return append([]byte(nil), v...)
	}
	type want struct {
		code    governance.VerificationFailureCode
		checked int64
		failed  int // index into recs of the failed record
	}
	cases := map[string]struct {
		tamper func(t *testing.T, s *Store, chain uuid.UUID)
		want   want
	}{
		"reorder two": {func(t *testing.T, s *Store, chain uuid.UUID) {
			a, b := get(t, s, recordKey(chain, 1)), get(t, s, recordKey(chain, 2))
			require.NoError(t, s.db.Set(recordKey(chain, 1), b, pebble.Sync))
			require.NoError(t, s.db.Set(recordKey(chain, 2), a, pebble.Sync))
		}, want{governance.BrokenLink, 1, 2}},
		"delete last": {func(t *testing.T, s *Store, chain uuid.UUID) {
			require.NoError(t, s.db.Delete(recordKey(chain, 4), pebble.Sync))
		}, want{governance.BrokenLink, 4, 3}},
		"delete two consecutive": {func(t *testing.T, s *Store, chain uuid.UUID) {
			require.NoError(t, s.db.Delete(recordKey(chain, 1), pebble.Sync))
			require.NoError(t, s.db.Delete(recordKey(chain, 2), pebble.Sync))
		}, want{governance.BrokenLink, 1, 3}},
		"delete first and last": {func(t *testing.T, s *Store, chain uuid.UUID) {
			require.NoError(t, s.db.Delete(recordKey(chain, 0), pebble.Sync))
			require.NoError(t, s.db.Delete(recordKey(chain, 4), pebble.Sync))
		}, want{governance.BrokenLink, 0, 1}},
		"record duplicated at the next key": {func(t *testing.T, s *Store, chain uuid.UUID) {
			require.NoError(t, s.db.Set(recordKey(chain, 3), get(t, s, recordKey(chain, 2)), pebble.Sync))
		}, want{governance.BrokenLink, 3, 2}},
		"empty value": {func(t *testing.T, s *Store, chain uuid.UUID) {
			require.NoError(t, s.db.Set(recordKey(chain, 2), nil, pebble.Sync))
		}, want{governance.UnsupportedAlgorithm, 2, -1}},
		"truncated value": {func(t *testing.T, s *Store, chain uuid.UUID) {
			v := get(t, s, recordKey(chain, 2))
			require.NoError(t, s.db.Set(recordKey(chain, 2), v[:len(v)-1], pebble.Sync))
		}, want{governance.ContentMismatch, 2, 2}},
		"extended value": {func(t *testing.T, s *Store, chain uuid.UUID) {
			v := get(t, s, recordKey(chain, 2))
			require.NoError(t, s.db.Set(recordKey(chain, 2), append(v, 0), pebble.Sync))
		}, want{governance.ContentMismatch, 2, 2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, _ := openTest(t, Options{BallastSize: -1})
			chain, recs := storetest.Fill(t, s, 5)
			tc.tamper(t, s, chain)
			res, err := s.Verify(ctx, chain, recs[4].ChainHash)
			require.NoError(t, err)
			require.False(t, res.Valid)
			require.Equal(t, tc.want.code, res.FailureCode)
			require.Equal(t, tc.want.checked, res.CheckedRecords)
			if tc.want.failed >= 0 {
				require.Equal(t, uuid.NullUUID{UUID: recs[tc.want.failed].RecordID, Valid: true}, res.FailedRecordID)
			} else {
				require.False(t, res.FailedRecordID.Valid)
			}
		})
	}
}

func TestStore_Read_UndecodableValueIsCorrupt(t *testing.T) {
	s, _ := openTest(t, Options{BallastSize: -1})
	chain, _ := storetest.Fill(t, s, 3)
	require.NoError(t, s.db.Set(recordKey(chain, 1), []byte{codecVersion, 1, 2}, pebble.Sync))
	_, err := s.Read(context.Background(), chain, -1)
	require.ErrorIs(t, err, ErrCorrupt)
}
