package pebblestore

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

func TestCodec_RoundTrip(t *testing.T) {
	r := storetest.Next(t, governance.EmptyHead, uuid.New())
	r.SupersedesRecordID = uuid.NullUUID{UUID: uuid.New(), Valid: true}
	second := storetest.Next(t, r.Head(), r.ChainID)
	upper := second
	upper.PayloadDigest = strings.ToUpper(upper.PayloadDigest) // not lowercase hex: kept as text
	for name, tc := range map[string]struct {
		rec    governance.EvidenceRecord
		encode func([]byte, governance.EvidenceRecord) []byte
		codec  byte
	}{
		"genesis":                    {r, encodeRecord, codecV2},
		"linked":                     {second, encodeRecord, codecV2},
		"digest not lowercase hex":   {upper, encodeRecord, codecVersion},
		"codec 1 (format 1) genesis": {r, encodeRecordV1, codecVersion},
		"codec 1 (format 1) linked":  {second, encodeRecordV1, codecVersion},
	} {
		t.Run(name, func(t *testing.T) {
			v := tc.encode(nil, tc.rec)
			require.Equal(t, tc.codec, v[0])
			if tc.codec == codecVersion {
				require.Len(t, v, encodedLenV1(tc.rec))
			} else {
				require.Len(t, v, encodedLen(tc.rec))
				require.LessOrEqual(t, len(v), encodedLenV1(tc.rec)-32, "raw digests save 32 bytes each (genesis stores zeros for the absent one)")
			}
			got, id, err := decodeRecord(v)
			require.NoError(t, err)
			require.Equal(t, tc.rec, got)
			require.Equal(t, uuid.NullUUID{UUID: tc.rec.RecordID, Valid: true}, id)
			scratch := []byte("left over from the previous record, longer than this one's text fields together, longer still")
			got, _, err = decodeRecordScratch(v, &scratch)
			require.NoError(t, err)
			require.Equal(t, tc.rec, got)
		})
	}
}

// FuzzCodec_Decode: garbage never panics, and whatever decodes re-encodes
// to a value that decodes to the same record.
func FuzzCodec_Decode(f *testing.F) {
	r := storetest.Next(f, governance.EmptyHead, uuid.New())
	f.Add(encodeRecord(nil, r))
	f.Add(encodeRecordV1(nil, r))
	f.Add(encodeRecord(nil, storetest.Next(f, r.Head(), r.ChainID)))
	f.Add([]byte{codecV2})
	f.Add([]byte{codecVersion})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, v []byte) {
		got, _, err := decodeRecord(v)
		var scratch []byte
		got2, _, err2 := decodeRecordScratch(v, &scratch)
		require.Equal(t, err, err2)
		if err != nil {
			return
		}
		require.Equal(t, got, got2)
		require.Len(t, encodeRecord(nil, got), encodedLen(got))
		again, _, err := decodeRecord(encodeRecord(nil, got))
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}

// Only lowercase hex digits make a digest storable raw: every byte value,
// at the first, a middle and the last position of a 64-character digest.
func TestCodec_LowerHexDigestEveryByte(t *testing.T) {
	valid := strings.Repeat("0123456789abcdef", 4)
	require.True(t, isLowerHexDigest(valid))
	require.False(t, isLowerHexDigest(valid[:63]))
	require.False(t, isLowerHexDigest(valid+"0"))
	for _, pos := range []int{0, 31, 63} {
		for c := range 256 {
			d := []byte(valid)
			d[pos] = byte(c)
			want := ('0' <= c && c <= '9') || ('a' <= c && c <= 'f')
			require.Equal(t, want, isLowerHexDigest(string(d)), "byte %#x at %d", c, pos)
		}
	}
}
