package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/server/client"
)

// TestLoad_64ClientsAuthorizeAndComplete: 64 concurrent clients, each in
// its own task, make a fixed number of governed round trips on loopback,
// then close and mint. No record is lost or duplicated (each chain holds
// exactly four records per call plus TASK_CLOSED), every chain verifies,
// every task mints.
func TestLoad_64ClientsAuthorizeAndComplete(t *testing.T) {
	e := sharedEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const clients, calls = 64, 8
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	closed := make(chan api.ClosedTask, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task, err := e.client.OpenTask(ctx, api.OpenTaskRequest{})
			if err != nil {
				errs <- err
				return
			}
			for n := 0; n < calls; n++ {
				res, err := e.client.Authorize(ctx, task.TaskID, readerCall(n))
				if err != nil {
					errs <- err
					return
				}
				if res.Decision != api.DecisionAllow {
					errs <- &unexpected{res}
					return
				}
				if err := e.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}); err != nil {
					errs <- err
					return
				}
			}
			c, err := e.client.CloseTask(ctx, task.TaskID)
			if err != nil {
				errs <- err
				return
			}
			closed <- c
		}()
	}
	wg.Wait()
	close(errs)
	close(closed)
	for err := range errs {
		require.NoError(t, err)
	}
	n := 0
	for c := range closed {
		n++
		var buf bytes.Buffer
		require.NoError(t, e.client.ExportChain(ctx, c.ChainID, &buf))
		var types []governance.EvidenceType
		require.NoError(t, evidence.ReadJSONL(&buf, func(r governance.EvidenceRecord) bool {
			types = append(types, r.RecordType)
			return true
		}))
		require.Len(t, types, 4*calls+1, "four records a call and TASK_CLOSED: none lost, none duplicated")
		completed := 0
		for _, ty := range types {
			if ty == governance.CallableCompleted {
				completed++
			}
		}
		require.Equal(t, calls, completed)
		res, err := e.client.VerifyChain(ctx, c.ChainID, c.Head)
		require.NoError(t, err)
		require.True(t, res.Valid)
		cert, err := e.client.Mint(ctx, c.ChainID, c.Head)
		require.NoError(t, err)
		require.Equal(t, governance.GateSummary{HardAllow: calls}, cert.Certificate.GateSummary)
	}
	require.Equal(t, clients, n)
}

type unexpected struct{ res api.AuthorizeResult }

func (u *unexpected) Error() string {
	b, _ := json.Marshal(u.res)
	return "unexpected answer: " + string(b)
}

func readerCall(n int) api.AuthorizeRequest {
	return api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Arguments: args(map[string]any{"path": "notes.md", "n": n})}}
}

// BenchmarkRoundTrip is one governed call's authorize + complete with the
// default policy on the durable Pebble store, with 64 concurrent callers:
// over HTTP on loopback through the Go client (http), and the same two
// phases in process through the library on the same engine (inprocess),
// the reference. It reports p50 and p99 latency and calls/s.
func BenchmarkRoundTrip(b *testing.B) {
	e := sharedEnv(b)
	// The same server without the OpenAPI checker the tests wrap it in.
	plain := httptest.NewServer(e.srv.Handler())
	defer plain.Close()
	c, err := client.New(plain.URL, client.Token(testToken))
	require.NoError(b, err)
	ctl := e.svc.Controller()
	pol, err := e.svc.ResolvePolicy(context.Background(), "", "")
	require.NoError(b, err)
	b.Run("http", func(b *testing.B) {
		roundTrips(b, func(ctx context.Context) (func(n int) error, func()) {
			task, err := c.OpenTask(ctx, api.OpenTaskRequest{})
			require.NoError(b, err)
			return func(n int) error {
					res, err := c.Authorize(ctx, task.TaskID, readerCall(n))
					if err != nil {
						return err
					}
					if res.Permit == nil {
						return &unexpected{res} // a gate timed out on an overloaded machine
					}
					return c.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID})
				}, func() {
					_, _ = c.CloseTask(ctx, task.TaskID)
				}
		})
	})
	b.Run("inprocess", func(b *testing.B) {
		roundTrips(b, func(ctx context.Context) (func(n int) error, func()) {
			task, err := ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: pol.PolicyID, Version: pol.Version})
			require.NoError(b, err)
			return func(n int) error {
					a := readerCall(n)
					p, err := task.Authorize(ctx, controller.Call{Tool: a.Tool, Arguments: a.Arguments})
					if err != nil {
						return err
					}
					return ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: task.ID()})
				}, func() {
					_, _ = task.Close(ctx)
				}
		})
	})
}

// roundTrips runs b.N round trips from 64 goroutines, each in its own
// task, and reports latency percentiles and throughput.
func roundTrips(b *testing.B, open func(ctx context.Context) (call func(n int) error, done func())) {
	ctx := context.Background()
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism((64 + 1) / 2) // 64 goroutines on this 2-core machine's GOMAXPROCS=2
	b.ReportAllocs()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		call, done := open(ctx)
		defer done()
		mine := make([]time.Duration, 0, 256)
		for n := 0; pb.Next(); n++ {
			t0 := time.Now()
			if err := call(n); err != nil {
				b.Error(err)
				return
			}
			mine = append(mine, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "calls/s")
}
