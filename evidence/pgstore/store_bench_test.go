package pgstore

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgtest"
)

// BenchmarkStore_Append is durable appends (fsync on) from 64 goroutines,
// each on its own chain, one record per statement or batches of three.
func BenchmarkStore_Append(b *testing.B) {
	for _, batch := range []int{1, 3} {
		b.Run(fmt.Sprintf("backend=postgres/writers=64/batch=%d", batch), func(b *testing.B) {
			s, err := Open(ctx, pgtest.SchemaOn(b, pgtest.SharedDurable(b)), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			var done atomic.Int64
			b.SetParallelism(32)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				chain, head := uuid.New(), governance.EmptyHead
				for pb.Next() {
					recs := make([]governance.EvidenceRecord, batch)
					for i := range recs {
						recs[i] = storetest.Next(b, head, chain)
						head = recs[i].Head()
					}
					if _, err := s.AppendBatch(ctx, recs); err != nil {
						b.Fatal(err)
					}
					done.Add(int64(batch))
				}
			})
			b.ReportMetric(float64(done.Load())/time.Since(start).Seconds(), "records/s")
		})
	}
}
