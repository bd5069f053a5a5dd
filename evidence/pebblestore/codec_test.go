package pebblestore

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

func TestCodec_RoundTrip(t *testing.T) {
	r := storetest.Next(t, governance.EmptyHead, uuid.New())
	r.SupersedesRecordID = uuid.NullUUID{UUID: uuid.New(), Valid: true}
	for _, rec := range []governance.EvidenceRecord{r, storetest.Next(t, r.Head(), r.ChainID)} {
		v := encodeRecord(nil, rec)
		require.Len(t, v, encodedLen(rec))
		got, id, err := decodeRecord(v)
		require.NoError(t, err)
		require.Equal(t, rec, got)
		require.Equal(t, uuid.NullUUID{UUID: rec.RecordID, Valid: true}, id)
		var scratch []byte
		got, _, err = decodeRecordScratch(v, &scratch)
		require.NoError(t, err)
		require.Equal(t, rec, got)
	}
}

// FuzzCodec_Decode: garbage never panics, and whatever decodes re-encodes
// to a value that decodes to the same record.
func FuzzCodec_Decode(f *testing.F) {
	r := storetest.Next(f, governance.EmptyHead, uuid.New())
	f.Add(encodeRecord(nil, r))
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
