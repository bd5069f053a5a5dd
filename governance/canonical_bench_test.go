package governance_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// typicalRecord is a GATE_EVALUATED record of about 600 canonical bytes.
func typicalRecord(b *testing.B) governance.EvidenceRecord {
	r, err := governance.NextRecord(governance.ChainHead{Sequence: 41, Hash: governance.SHA256Hex([]byte("prev"))}, governance.RecordSpec{
		Type: governance.GateEvaluated, ChainID: uuid.New(), OperationID: uuid.NullUUID{UUID: uuid.New(), Valid: true},
		PolicyID: uuid.New(), PolicyVersion: "2026.11.1",
		Payload: map[string]any{
			"gate_id": "pathguard", "level": "hard", "decision": "deny", "phase": "check",
			"reason_code": "path.outside_root", "argument_digest": governance.SHA256Hex([]byte("args")),
			"module_digest": governance.SHA256Hex([]byte("module")), "fields": []string{"path"}, "duration_us": 12,
		},
		CreatedAt: time.Now(),
	})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkRecord_ChainHash is canonical encoding + sha256 of a typical
// record; BenchmarkSHA256_SameBytes hashes the same bytes alone, the
// reference the issue sets (target: within 3×).
func BenchmarkRecord_ChainHash(b *testing.B) {
	r := typicalRecord(b)
	in, _ := r.ChainHashInput()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.ComputeChainHash(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSHA256_SameBytes(b *testing.B) {
	r := typicalRecord(b)
	in, _ := r.ChainHashInput()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sha256.Sum256(in)
	}
}

func BenchmarkCanonical_Payload(b *testing.B) {
	payload := map[string]any{
		"gate_id": "pathguard", "level": "hard", "decision": "deny", "phase": "check",
		"reason_code": "path.outside_root", "fields": []string{"path"}, "duration_us": 12,
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := governance.Canonical(payload); err != nil {
			b.Fatal(err)
		}
	}
}
