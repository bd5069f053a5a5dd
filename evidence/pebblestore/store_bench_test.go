package pebblestore

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// Reproduce the README figures (references run in the same invocation):
//
//	go test -run '^$' -bench . -benchtime 2s ./evidence/pebblestore

// buildChain returns n consecutive records of a new chain.
func buildChain(b *testing.B, n int) []governance.EvidenceRecord { return buildChainT(b, n) }

func buildChainT(b testing.TB, n int) []governance.EvidenceRecord {
	chain := uuid.New()
	recs := make([]governance.EvidenceRecord, n)
	head := governance.EmptyHead
	for i := range recs {
		recs[i] = storetest.Next(b, head, chain)
		head = recs[i].Head()
	}
	return recs
}

// valueSize is the size of one encoded record value: the raw Pebble
// reference writes values of this size.
func valueSize(b *testing.B) int {
	return len(encodeRecord(nil, buildChain(b, 1)[0]))
}

func openRaw(b *testing.B) *pebble.DB {
	db, err := pebble.Open(b.TempDir(), &pebble.Options{Logger: quietLogger{}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })
	return db
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)      {}
func (quietLogger) Errorf(string, ...any)     {}
func (quietLogger) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func openBench(b *testing.B) *Store           { s, _ := openTest(b, Options{BallastSize: -1}); return s }
func rawKey(w, i int) []byte                  { return binary.BigEndian.AppendUint64([]byte{byte(w)}, uint64(i)) }
func reportRate(b *testing.B, n int, unit string) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), unit)
}

// BenchmarkAppend_SingleWriter: one writer, synced. The reference is a raw
// synced Set of a value the size of an encoded record.
func BenchmarkAppend_SingleWriter(b *testing.B) {
	b.Run("backend=raw-pebble/sync=true", func(b *testing.B) {
		db := openRaw(b)
		v := make([]byte, valueSize(b))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := db.Set(rawKey(0, i), v, pebble.Sync); err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b, b.N, "appends/s")
	})
	b.Run("backend=pebblestore/sync=true", func(b *testing.B) {
		s := openBench(b)
		recs := buildChain(b, b.N)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.Append(ctx, recs[i]); err != nil {
				b.Fatal(err)
			}
		}
		reportRate(b, b.N, "appends/s")
	})
}

// BenchmarkAppend_Interleaved runs each store append right after a raw
// synced Set of the same value size, on two DBs in the same directory
// tree, and reports the medians of both and their ratio. On a shared
// machine fsync latency swings by 5x within seconds; pairing the two cancels
// that drift, which back-to-back sub-benchmarks do not.
func BenchmarkAppend_Interleaved(b *testing.B) {
	b.Run("writers=1", func(b *testing.B) {
		db := openRaw(b)
		s := openBench(b)
		v := make([]byte, valueSize(b))
		recs := buildChain(b, b.N)
		ctx := context.Background()
		raw := make([]time.Duration, b.N)
		store := make([]time.Duration, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if err := db.Set(rawKey(0, i), v, pebble.Sync); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if _, err := s.Append(ctx, recs[i]); err != nil {
				b.Fatal(err)
			}
			raw[i], store[i] = t1.Sub(t0), time.Since(t1)
		}
		b.StopTimer()
		r, st := median(raw), median(store)
		b.ReportMetric(float64(r.Microseconds()), "raw-µs/append")
		b.ReportMetric(float64(st.Microseconds()), "store-µs/append")
		b.ReportMetric(float64(st)/float64(r), "latency-ratio")
	})
	const writers, burst = 64, 16
	b.Run(fmt.Sprintf("writers=%d/chains=%d", writers, writers), func(b *testing.B) {
		db := openRaw(b)
		s := openBench(b)
		v := make([]byte, valueSize(b))
		rounds := max(1, b.N/(writers*burst))
		chains := make([][]governance.EvidenceRecord, writers)
		for w := range chains {
			chains[w] = buildChain(b, rounds*burst)
		}
		ctx := context.Background()
		var rawTime, storeTime time.Duration
		b.ResetTimer()
		for round := range rounds {
			t0 := time.Now()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range burst {
						if err := db.Set(rawKey(w, round*burst+i), v, pebble.Sync); err != nil {
							panic(err)
						}
					}
				}()
			}
			wg.Wait()
			t1 := time.Now()
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, r := range chains[w][round*burst : (round+1)*burst] {
						if _, err := s.Append(ctx, r); err != nil {
							panic(err)
						}
					}
				}()
			}
			wg.Wait()
			rawTime, storeTime = rawTime+t1.Sub(t0), storeTime+time.Since(t1)
		}
		b.StopTimer()
		n := float64(rounds * writers * burst)
		b.ReportMetric(n/rawTime.Seconds(), "raw-appends/s")
		b.ReportMetric(n/storeTime.Seconds(), "store-appends/s")
		b.ReportMetric(rawTime.Seconds()/storeTime.Seconds(), "throughput-ratio")
	})
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkAppend_Concurrent: 64 goroutines, each appending to its own
// chain, against 64 goroutines of raw synced Sets. Both rely on Pebble
// coalescing WAL syncs.
func BenchmarkAppend_Concurrent(b *testing.B) {
	const writers = 64
	share := func(n, w int) int { return n/writers + btoi(w < n%writers) }
	b.Run(fmt.Sprintf("backend=raw-pebble/writers=%d", writers), func(b *testing.B) {
		db := openRaw(b)
		v := make([]byte, valueSize(b))
		b.ReportAllocs()
		b.ResetTimer()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range share(b.N, w) {
					if err := db.Set(rawKey(w, i), v, pebble.Sync); err != nil {
						panic(err)
					}
				}
			}()
		}
		wg.Wait()
		reportRate(b, b.N, "appends/s")
	})
	b.Run(fmt.Sprintf("backend=pebblestore/writers=%d/chains=%d", writers, writers), func(b *testing.B) {
		s := openBench(b)
		chains := make([][]governance.EvidenceRecord, writers)
		for w := range chains {
			chains[w] = buildChain(b, share(b.N, w))
		}
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, r := range chains[w] {
					if _, err := s.Append(ctx, r); err != nil {
						panic(err)
					}
				}
			}()
		}
		wg.Wait()
		reportRate(b, b.N, "appends/s")
	})
}

// cpuTime is the user+system CPU time the process has used.
func cpuTime() time.Duration {
	u := usage()
	return u.user + u.sys
}

// processUsage is what getrusage counts for the process: CPU time, and
// the minor page faults (fresh pages touched: ~16 µs each on the
// benchmark VM, and a count the machine's load does not change).
type processUsage struct {
	user, sys time.Duration
	minflt    int64
}

func usage() processUsage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return processUsage{time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Minflt}
}

// reportUsage reports the CPU time (all of it, and the kernel's share)
// and minor faults since u0, per unit.
func reportUsage(b *testing.B, u0 processUsage, n int, unit string) {
	u := usage()
	b.ReportMetric(float64((u.user+u.sys-u0.user-u0.sys).Microseconds())/float64(n), "cpu-µs/"+unit)
	b.ReportMetric(float64((u.sys-u0.sys).Microseconds())/float64(n), "sys-µs/"+unit)
	b.ReportMetric(float64(u.minflt-u0.minflt)/float64(n), "minflt/"+unit)
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// verifyFixture is one chain written once per process, flushed to
// sstables and reopened, so Verify reads from disk, not the memtable.
var verifyFixture struct {
	once  sync.Once
	dir   string
	chain uuid.UUID
	head  string
}

const verifyRecords = 100_000

// BenchmarkStore_Verify streams a 100k-record chain from disk (one core:
// Verify is a single goroutine).
func BenchmarkStore_Verify(b *testing.B) {
	f := &verifyFixture
	f.once.Do(func() {
		f.dir = b.TempDir() // NB: removed when this first benchmark run ends
		s, err := Open(f.dir, Options{BallastSize: -1})
		require.NoError(b, err)
		recs := buildChain(b, verifyRecords)
		for i := 0; i < len(recs); i += 1000 {
			_, err := s.AppendBatch(context.Background(), recs[i:min(i+1000, len(recs))])
			require.NoError(b, err)
		}
		require.NoError(b, s.db.Flush())
		require.NoError(b, s.db.Compact(context.Background(), []byte("e/"), []byte("e0"), true))
		require.NoError(b, s.Close())
		f.chain, f.head = recs[0].ChainID, recs[len(recs)-1].ChainHash
	})
	// cache=cold reopens the store before each pass: every block comes
	// from the file (through the OS page cache). cache=warm keeps one
	// store open, so blocks come from Pebble's block cache.
	for _, cold := range []bool{true, false} {
		name := fmt.Sprintf("records=%d/cache=warm", verifyRecords)
		if cold {
			name = fmt.Sprintf("records=%d/cache=cold", verifyRecords)
		}
		b.Run(name, func(b *testing.B) {
			s, err := Open(f.dir, Options{BallastSize: -1})
			require.NoError(b, err)
			defer func() { _ = s.Close() }()
			ctx := context.Background()
			b.ReportAllocs()
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if cold {
					b.StopTimer()
					require.NoError(b, s.Close())
					s, err = Open(f.dir, Options{BallastSize: -1})
					require.NoError(b, err)
					b.StartTimer()
				}
				cpu0 := cpuTime()
				res, err := s.Verify(ctx, f.chain, f.head)
				cpu += cpuTime() - cpu0
				if err != nil || !res.Valid || res.CheckedRecords != verifyRecords {
					b.Fatalf("%+v %v", res, err)
				}
			}
			b.StopTimer()
			reportRate(b, b.N*verifyRecords, "records/s")
			// Wall-clock rates swing with other load on a shared machine;
			// the process's CPU time (GC included) does not.
			b.ReportMetric(float64(b.N*verifyRecords)/cpu.Seconds(), "records/cpu-s")
		})
	}
}

// BenchmarkAppend_Calls is the store's share of 64 concurrent governed
// calls: each call one synced batch of five records (the records before
// the callable) and one of one record (its outcome), each writer on its
// own chain. store=memory is evidence.MemStore on the same records: what
// the calls cost without a disk. cpu-µs/call is the process's CPU time a
// call, Pebble's background work included.
func BenchmarkAppend_Calls(b *testing.B) {
	const writers, pre = 64, 5
	for _, backend := range []string{"memory", "pebblestore"} {
		b.Run(fmt.Sprintf("store=%s/writers=%d", backend, writers), func(b *testing.B) {
			var s interface {
				AppendBatch(context.Context, []governance.EvidenceRecord) ([]governance.AppendReceipt, error)
			}
			if backend == "memory" {
				s = evidence.NewMemStore()
			} else {
				s = openBench(b)
			}
			calls := func(w int) int { return b.N/writers + btoi(w < b.N%writers) }
			chains := make([][]governance.EvidenceRecord, writers)
			for w := range chains {
				chains[w] = buildChain(b, calls(w)*(pre+1))
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			u0 := usage()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					recs := chains[w]
					for len(recs) > 0 {
						if _, err := s.AppendBatch(ctx, recs[:pre]); err != nil {
							panic(err)
						}
						if _, err := s.AppendBatch(ctx, recs[pre:pre+1]); err != nil {
							panic(err)
						}
						recs = recs[pre+1:]
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			reportRate(b, b.N, "calls/s")
			reportUsage(b, u0, b.N, "call")
		})
	}
}
