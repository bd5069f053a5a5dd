package evidence_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

func chainVector(t testing.TB) ([]governance.EvidenceRecord, []byte) {
	t.Helper()
	data, err := os.ReadFile("testdata/chain.jsonl")
	require.NoError(t, err)
	var recs []governance.EvidenceRecord
	require.NoError(t, evidence.ReadJSONL(bytes.NewReader(data), func(r governance.EvidenceRecord) bool {
		recs = append(recs, r)
		return true
	}))
	require.Len(t, recs, 6)
	return recs, data
}

func TestVerifyRecords_ReferenceChain(t *testing.T) {
	recs, _ := chainVector(t)
	head := recs[5].ChainHash
	require.Equal(t, governance.VerificationResult{Valid: true, VerifiedHead: head, CheckedRecords: 6}, evidence.VerifyRecords(recs, head))
}

// TestVerifyRecords_EveryFieldTampered changes each field of each record of
// the reference chain and checks the failure code, the failed record, and
// the count of records verified before it.
func TestVerifyRecords_EveryFieldTampered(t *testing.T) {
	recs, _ := chainVector(t)
	other := governance.SHA256Hex([]byte("other"))
	mutations := []struct {
		field string
		code  governance.VerificationFailureCode
		apply func(r *governance.EvidenceRecord)
	}{
		{"payload_json", governance.ContentMismatch, func(r *governance.EvidenceRecord) {
			r.PayloadJSON = strings.Replace(r.PayloadJSON, "deny", "allw", 1) + " "
		}},
		{"payload_digest", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.PayloadDigest = other }},
		{"chain_hash", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.ChainHash = other }},
		{"record_id", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.RecordID = uuid.New() }},
		{"record_type", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.RecordType = governance.RecordSuperseded }},
		{"chain_id", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.ChainID = uuid.New() }},
		{"operation_id", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.OperationID = uuid.NullUUID{UUID: uuid.New(), Valid: true} }},
		{"policy_id", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.PolicyID = uuid.New() }},
		{"policy_version", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.PolicyVersion += "x" }},
		{"supersedes_record_id", governance.ContentMismatch, func(r *governance.EvidenceRecord) {
			r.SupersedesRecordID = uuid.NullUUID{UUID: uuid.New(), Valid: true}
		}},
		{"created_at", governance.ContentMismatch, func(r *governance.EvidenceRecord) { r.CreatedAt = r.CreatedAt.Add(time.Microsecond) }},
		{"previous_chain_hash", governance.BrokenLink, func(r *governance.EvidenceRecord) { r.PreviousChainHash = other }},
		{"sequence", governance.BrokenLink, func(r *governance.EvidenceRecord) { r.Sequence += 7 }},
		{"hash_algorithm", governance.UnsupportedAlgorithm, func(r *governance.EvidenceRecord) { r.HashAlgorithm = "sha256-v2" }},
	}
	for i := range recs {
		for _, m := range mutations {
			t.Run(m.field, func(t *testing.T) {
				chain := append([]governance.EvidenceRecord(nil), recs...)
				m.apply(&chain[i])
				res := evidence.VerifyRecords(chain, recs[5].ChainHash)
				require.False(t, res.Valid)
				require.Equal(t, m.code, res.FailureCode)
				require.Equal(t, int64(i), res.CheckedRecords)
				require.Equal(t, uuid.NullUUID{UUID: chain[i].RecordID, Valid: true}, res.FailedRecordID)
				if i == 0 {
					require.Empty(t, res.VerifiedHead)
				} else {
					require.Equal(t, recs[i-1].ChainHash, res.VerifiedHead)
				}
			})
		}
	}
}

func TestVerifyRecords_StructuralBreaks(t *testing.T) {
	recs, _ := chainVector(t)
	head := recs[5].ChainHash
	cases := map[string]struct {
		chain   []governance.EvidenceRecord
		checked int64
		failed  int // index into recs, -1 for none
	}{
		"empty":            {nil, 0, -1},
		"first removed":    {recs[1:], 0, 1},
		"gap":              {append(append([]governance.EvidenceRecord{}, recs[:3]...), recs[4:]...), 3, 4},
		"reordered":        {[]governance.EvidenceRecord{recs[0], recs[2], recs[1], recs[3], recs[4], recs[5]}, 1, 2},
		"duplicated":       {append(append([]governance.EvidenceRecord{}, recs[:3]...), recs[2:]...), 3, 2},
		"truncated":        {recs[:4], 4, 3},
		"stale head given": {recs, 6, 5},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			expected := head
			if name == "stale head given" {
				expected = recs[3].ChainHash
			}
			res := evidence.VerifyRecords(c.chain, expected)
			require.False(t, res.Valid)
			require.Equal(t, governance.BrokenLink, res.FailureCode)
			require.Equal(t, c.checked, res.CheckedRecords)
			if c.failed < 0 {
				require.False(t, res.FailedRecordID.Valid)
			} else {
				require.Equal(t, recs[c.failed].RecordID, res.FailedRecordID.UUID)
			}
		})
	}
}

func TestReadJSONL_Malformed(t *testing.T) {
	_, data := chainVector(t)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	cases := map[string]struct {
		in   []byte
		line int
	}{
		"truncated last line": {append(bytes.Join(lines, []byte("\n"))[:len(data)-40], '\n'), 6},
		"not hex hash":        {bytes.Replace(data, []byte(`"chain_hash": "48389f8e`), []byte(`"chain_hash": "XX389f8e`), 1), 1},
		"garbage line":        {append(append([]byte{}, data...), []byte("{nope\n")...), 7},
		"not a record":        {[]byte("{\"a\": 1}\n"), 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := evidence.VerifyJSONL(bytes.NewReader(c.in), "")
			var le *evidence.LineError
			require.ErrorAs(t, err, &le)
			require.ErrorIs(t, err, evidence.ErrChainFile)
			require.Equal(t, c.line, le.Line)
		})
	}
}

func FuzzReadJSONL(f *testing.F) {
	_, data := chainVector(f)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		n := 0
		err := evidence.ReadJSONL(bytes.NewReader(in), func(r governance.EvidenceRecord) bool {
			require.NoError(t, r.Validate())
			n++
			return true
		})
		if err != nil {
			require.ErrorIs(t, err, evidence.ErrChainFile)
		}
	})
}
