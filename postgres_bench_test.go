package govhost_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/internal/pgtest"
	"github.com/govhost/govhost/policy/policyfile"
)

// durableEnv opens an engine on opts with the bench policy stored and
// active in the engine's own (durable) policy store.
func durableEnv(b *testing.B, opts govhost.Options) *benchEnv {
	b.Helper()
	ctx := context.Background()
	opts.Dir = b.TempDir()
	eng, err := govhost.Open(ctx, withCache(opts))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close(ctx) })
	root := b.TempDir()
	snap, err := policyfile.Load([]byte(benchPolicy(uuid.New(), root)), "bench.json", eng.Gates.Resolver(root))
	if err != nil {
		b.Fatal(err)
	}
	if err := eng.Policies.Put(ctx, snap); err != nil {
		b.Fatal(err)
	}
	if snap, err = eng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), nil, time.Now()); err != nil {
		b.Fatal(err)
	}
	ctl, err := eng.NewController(controller.Config{})
	if err != nil {
		b.Fatal(err)
	}
	m := controller.NewManager()
	if err := m.Register(controller.Tool{ID: "bash", Fn: func(context.Context, map[string]any) (any, error) { return nil, nil }}); err != nil {
		b.Fatal(err)
	}
	if err := m.Govern(ctl, controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}); err != nil {
		b.Fatal(err)
	}
	return &benchEnv{ctl: ctl, m: m, snap: snap, eng: eng}
}

// parallel64 runs op from 64 goroutines (32 per core on two cores) until
// b.N calls and reports the rate.
func parallel64(b *testing.B, setup func() func()) float64 {
	var done atomic.Int64
	b.SetParallelism(32)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		op := setup()
		for pb.Next() {
			op()
			done.Add(1)
		}
	})
	rate := float64(done.Load()) / time.Since(start).Seconds()
	b.ReportMetric(rate, "ops/s")
	return rate
}

// BenchmarkDurableGoverned is durable governed operations per second from
// 64 concurrent tasks (one governed bash call through the three built-in
// Wasm gates: six records in three appends, each committed before the
// call goes on, plus the policy lookup) on Pebble and on PostgreSQL
// (fsync on, synchronous_commit on), and, in the same run and on the same
// server and pool size, the reference: 64 goroutines committing one-row
// INSERT transactions that do nothing else. The ratios are logged.
func BenchmarkDurableGoverned(b *testing.B) {
	var pebble, postgres, insert float64
	governed := func(e *benchEnv) func() func() {
		return func() func() {
			task, err := e.ctl.OpenTask(context.Background(), controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()})
			if err != nil {
				b.Fatal(err)
			}
			return func() { e.invoke(b, task) }
		}
	}
	b.Run("store=pebble/tasks=64", func(b *testing.B) {
		pebble = parallel64(b, governed(durableEnv(b, govhost.Options{})))
	})
	b.Run("store=postgres/tasks=64", func(b *testing.B) {
		dsn := pgtest.SchemaOn(b, pgtest.SharedDurable(b))
		postgres = parallel64(b, governed(durableEnv(b, govhost.Options{Store: dsn})))
	})
	b.Run("reference=insert-sync-commit/tasks=64", func(b *testing.B) {
		ctx := context.Background()
		dsn := pgtest.SchemaOn(b, pgtest.SharedDurable(b))
		cfg, err := pgxpool.ParseConfig(dsn + " synchronous_commit=on")
		if err != nil {
			b.Fatal(err)
		}
		cfg.MaxConns = 32 // the stores' default pool
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer pool.Close()
		if _, err := pool.Exec(ctx, `CREATE TABLE bench_ref (id bigserial PRIMARY KEY, payload text NOT NULL)`); err != nil {
			b.Fatal(err)
		}
		payload := `{"tool_id":"bash","decision":"allow"}`
		insert = parallel64(b, func() func() {
			return func() {
				if _, err := pool.Exec(ctx, `INSERT INTO bench_ref (payload) VALUES ($1)`, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	if postgres > 0 && insert > 0 {
		b.Logf("governed ops/s: postgres %.0f = %.2f× plain INSERT commits (%.0f/s), %.2f× pebble (%.0f/s)",
			postgres, postgres/insert, insert, postgres/pebble, pebble)
	}
}
