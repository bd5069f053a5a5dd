package evidence_test

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

func BenchmarkMemStore_Append(b *testing.B) {
	ctx := context.Background()
	s := evidence.NewMemStore()
	chain := uuid.New()
	recs := make([]governance.EvidenceRecord, b.N)
	head := governance.EmptyHead
	for i := range recs {
		recs[i] = storetest.Next(b, head, chain)
		head = recs[i].Head()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range recs {
		if _, err := s.Append(ctx, recs[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify_Memory reports records/s verifying a 10k-record chain held
// in memory on one goroutine (target: at least 500k records/s).
func BenchmarkVerify_Memory(b *testing.B) {
	const n = 10000
	chain := uuid.New()
	recs := make([]governance.EvidenceRecord, n)
	head := governance.EmptyHead
	for i := range recs {
		recs[i] = storetest.Next(b, head, chain)
		head = recs[i].Head()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res := evidence.VerifyRecords(recs, head.Hash); !res.Valid {
			b.Fatal(res)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}
