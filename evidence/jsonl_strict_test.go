package evidence_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// TestReadJSONL_RefusesForgedLines: a line that other readers would read
// differently from Go's encoding/json (a case-variant duplicate key) or
// that respells a value is refused with its line number and field, not
// verified.
func TestReadJSONL_RefusesForgedLines(t *testing.T) {
	recs, data := chainVector(t)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	forge := func(i int, old, new string) []byte {
		out := make([][]byte, len(lines))
		copy(out, lines)
		require.Contains(t, string(out[i]), old)
		out[i] = bytes.Replace(out[i], []byte(old), []byte(new), 1)
		return append(bytes.Join(out, []byte("\n")), '\n')
	}
	cases := map[string]struct {
		in    []byte
		line  int
		field string
	}{
		"case-variant duplicate key": {forge(4, `"record_type": "callable_completed"`, `"record_type": "operation_denied", "RECORD_TYPE": "callable_completed"`), 5, "record.RECORD_TYPE"},
		"upper-case UUID":            {forge(2, recs[2].RecordID.String(), "70CC7628-9BD7-438B-BDDA-B6B5EDB6CE2F"), 3, "record_id"},
		"time with offset":           {forge(1, governance.FormatTime(recs[1].CreatedAt), governance.FormatTime(recs[1].CreatedAt)[:26]+"+00:00"), 2, "created_at"},
		"null field left out":        {forge(0, `"operation_id": null, `, ``), 1, "operation_id"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := evidence.VerifyJSONL(bytes.NewReader(c.in), recs[5].ChainHash)
			var le *evidence.LineError
			require.ErrorAs(t, err, &le)
			require.Equal(t, c.line, le.Line)
			var ve *governance.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, c.field, ve.Field)
		})
	}
}

func BenchmarkReadJSONL(b *testing.B) {
	_, data := chainVector(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := evidence.ReadJSONL(bytes.NewReader(data), func(governance.EvidenceRecord) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadJSONL_MapReference decodes the same lines into maps with
// encoding/json: the reference for BenchmarkReadJSONL's strict reading.
func BenchmarkReadJSONL_MapReference(b *testing.B) {
	_, data := chainVector(b)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal(l, &m); err != nil {
				b.Fatal(err)
			}
		}
	}
}
