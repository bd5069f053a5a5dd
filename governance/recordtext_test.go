package governance

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestAppendTime_AsTimeFormat covers the edges of the hand-written
// layout: the first and last four-digit years, the years time.Format
// writes (negative, five digits), a zone other than UTC and every digit
// of the microseconds.
func TestAppendTime_AsTimeFormat(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 12, 6, 4, 5, 6, 123456789, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 6, 15, 12, 30, 0, 1000, time.UTC),
		time.Date(2026, 12, 6, 1, 0, 0, 7000, time.FixedZone("x", 5*3600+1800)),
		{},
	} {
		require.Equal(t, tm.UTC().Format(TimeLayout), FormatTime(tm), "%v", tm)
	}
	require.Equal(t, []byte("x2026-12-06T04:05:06.000001Z"), AppendTime([]byte("x"), time.Date(2026, 12, 6, 4, 5, 6, 1000, time.UTC)))
}

// FuzzAppendTime_SameAsTimeFormat: any instant, in any fixed zone, is
// written as time.Format writes it in UTC.
func FuzzAppendTime_SameAsTimeFormat(f *testing.F) {
	f.Add(int64(1796515200), int64(123456789), int32(0))
	f.Add(int64(-62135596800), int64(0), int32(-3600))
	f.Add(int64(253402300799), int64(999999999), int32(50400))
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int32) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("z", int(offset%(26*3600))))
		require.Equal(t, tm.UTC().Format(TimeLayout), string(AppendTime(nil, tm)))
	})
}

// The record encoder's hex (ids, digests) is encoding/hex's and
// uuid.UUID.String's, and a digest matches only its own lowercase hex.
func TestRecordHex_AsTheStandardLibrary(t *testing.T) {
	for i := range 256 {
		id := uuid.New()
		id[i%16] = byte(i)
		require.Equal(t, id.String(), string(AppendUUID(nil, id)))
		sum := sha256.Sum256(id[:])
		want := hex.EncodeToString(sum[:])
		require.Equal(t, want, hexDigest(sum))
		require.True(t, hexEqual(sum, want))
		for _, bad := range []string{want[:63], strings.ToUpper(want), want[:i%64] + "g" + want[i%64+1:], want + "0"} {
			require.False(t, hexEqual(sum, bad), bad)
		}
	}
}
