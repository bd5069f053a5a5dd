package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/service"
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
// API tests' policy on the durable Pebble store, with 64 concurrent
// callers, each in its own task: over HTTP on loopback through the Go
// client (http), and the same two phases in process through the library
// (inprocess), the reference. One round trip is those two requests, no
// more: the tasks are opened before the clock starts and closed after it
// stops, and the sealing their close starts (a certificate bundle each,
// written in the background) is waited for, so that neither figure pays
// for the other's. Each runs on its own fresh engine, so both start from
// the same empty store. It reports p50 and p99 latency, calls/s and the
// process's CPU time a call.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("http", func(b *testing.B) {
		e := benchEnv(b, "http")
		c, ctx := e.client, context.Background()
		roundTrips(b, e, func() (func(n int) error, func() uuid.UUID) {
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
				}, func() uuid.UUID {
					_, err := c.CloseTask(ctx, task.TaskID)
					require.NoError(b, err)
					return task.TaskID
				}
		})
	})
	b.Run("service", func(b *testing.B) {
		// The same two requests as http, through the service the server's
		// handlers call, without HTTP: what http costs beyond it is the
		// transport (the client, net/http, the handlers' reading and
		// writing); what it costs beyond inprocess is the service's own
		// (its authorization bookkeeping, its error mapping).
		e := benchEnv(b, "service")
		svc, ctx := e.svc, context.Background()
		roundTrips(b, e, func() (func(n int) error, func() uuid.UUID) {
			task, err := svc.OpenTask(ctx, service.OpenTaskRequest{})
			require.NoError(b, err)
			return func(n int) error {
					a := readerCall(n)
					res, err := svc.Authorize(ctx, task.TaskID, controller.Call{Tool: a.Tool, Arguments: a.Arguments}, 0)
					if err != nil {
						return err
					}
					if res.Permit == nil {
						return errors.New("not allowed: " + string(res.Decision))
					}
					return svc.Complete(ctx, task.TaskID, service.CompleteRequest{PermitID: res.Permit.ID})
				}, func() uuid.UUID {
					_, err := svc.CloseTask(ctx, task.TaskID)
					require.NoError(b, err)
					return task.TaskID
				}
		})
	})
	b.Run("inprocess", func(b *testing.B) {
		e := benchEnv(b, "inprocess")
		ctl, ctx := e.svc.Controller(), context.Background()
		pol, err := e.svc.ResolvePolicy(ctx, "", "")
		require.NoError(b, err)
		roundTrips(b, e, func() (func(n int) error, func() uuid.UUID) {
			task, err := ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: pol.PolicyID, Version: pol.Version})
			require.NoError(b, err)
			return func(n int) error {
					a := readerCall(n)
					p, err := task.Authorize(ctx, controller.Call{Tool: a.Tool, Arguments: a.Arguments})
					if err != nil {
						return err
					}
					return ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: task.ID()})
				}, func() uuid.UUID {
					_, err := task.Close(ctx)
					require.NoError(b, err)
					return task.ID()
				}
		})
	})
}

// benchEnvs holds BenchmarkRoundTrip's engines, one a sub-benchmark (the
// testing package calls a sub-benchmark's function more than once).
var benchEnvs = map[string]*env{}

// benchEnv returns the sub-benchmark name's own engine and server, without
// the OpenAPI checker the tests wrap theirs in.
func benchEnv(b *testing.B, name string) *env {
	if e := benchEnvs[name]; e != nil {
		return e
	}
	e := openEnv(b, false)
	benchEnvs[name] = e // TestMain closes it
	return e
}

// roundTrips runs b.N round trips from 64 goroutines, each in its own
// task, and reports latency percentiles, throughput and CPU time a call.
// open opens a task (before the clock starts) and returns its call and
// its close (after the clock stops; it returns the task's id).
func roundTrips(b *testing.B, e *env, open func() (call func(n int) error, closeTask func() uuid.UUID)) {
	const parallelism = (64 + 1) / 2 // 64 goroutines on this 2-core machine's GOMAXPROCS=2
	clients := parallelism * runtime.GOMAXPROCS(0)
	calls, closes := make([]func(int) error, clients), make([]func() uuid.UUID, clients)
	for i := range calls {
		calls[i], closes[i] = open()
	}
	var next atomic.Int32
	var mu sync.Mutex
	var lat []time.Duration
	b.SetParallelism(parallelism)
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), processCPU()
	b.RunParallel(func(pb *testing.PB) {
		call := calls[next.Add(1)-1]
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
	elapsed, cpuUsed := time.Since(start), processCPU()-cpu
	b.StopTimer()
	tasks := make([]uuid.UUID, 0, clients)
	for _, closeTask := range closes {
		tasks = append(tasks, closeTask())
	}
	waitSealed(b, e, tasks)
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "calls/s")
	// CPU time a round trip (client and server, this process): what a
	// loaded machine inflates far less than calls/s.
	b.ReportMetric(float64(cpuUsed.Microseconds())/float64(len(lat)), "cpu-µs/call")
}

// waitSealed waits until the engine has kept the certificate bundle of
// every closed task (the sealer writes them in the background after
// TASK_CLOSED), so that this work does not land in the next measurement.
// The sealer may drop an observation under load (it then seals at the
// engine's close): the wait gives up after a bound.
func waitSealed(b *testing.B, e *env, tasks []uuid.UUID) {
	deadline := time.Now().Add(time.Minute)
	for _, task := range tasks {
		for {
			// The bundle's folder is renamed into place whole.
			if _, err := os.Stat(e.eng.KeptBundleDir(task)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Logf("task %s: no certificate bundle after a minute; going on", task)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
