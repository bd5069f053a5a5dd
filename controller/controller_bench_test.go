package controller_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
)

// BenchmarkInvoke_FakeGates measures the controller's own overhead on the
// in-memory store: three allowing Go gates, a no-op tool, six records a
// call. The figure with the built-in Wasm gates is in the root package's
// benchmarks. cpu-µs/op is the process's CPU time a call (GC included),
// which a loaded machine inflates far less than wall time.
func BenchmarkInvoke_FakeGates(b *testing.B) {
	e := newEnv(b, []binding{hard("a", noRecord{}), hard("b", noRecord{}), hard("c", noRecord{})})
	call := controller.Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"git status","timeout":30}`)}
	ctx := context.Background()
	op := e.opctx("bash")
	heap := heapRetained()
	b.ReportAllocs()
	b.ResetTimer()
	cpu, faults := processCPU(), processFaults()
	for i := 0; i < b.N; i++ {
		if i%100 == 0 { // a new task chain every 100 operations
			op.ChainID = uuid.New()
		}
		if _, err := e.m.Invoke(ctx, call, op); err != nil {
			b.Fatal(err)
		}
	}
	reportCallCost(b, cpu, faults, heap)
	runtime.KeepAlive(e) // NB: its store holds what the calls retained
}

// reportCallCost reports what b's calls cost a call besides wall time:
// CPU time (cpu-µs/op, GC included), minor page faults (minflt/op: fresh
// memory touched, ~16 µs each on the project's VM, independent of the
// load) and the heap still in use after a collection (retained-B/op:
// what the store keeps a call). cpu, faults and heap are the figures
// taken before the timed loop.
func reportCallCost(b *testing.B, cpu time.Duration, faults int64, heap uint64) {
	n := float64(b.N)
	b.ReportMetric(float64(processCPU()-cpu)/1e3/n, "cpu-µs/op")
	b.ReportMetric(float64(processFaults()-faults)/n, "minflt/op")
	b.StopTimer()
	b.ReportMetric((float64(heapRetained())-float64(heap))/n, "retained-B/op")
}

// heapRetained is the heap in use after a full collection.
func heapRetained() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// noRecord allows without keeping its inputs.
type noRecord struct{}

func (noRecord) Evaluate(context.Context, abi.GateInput) (abi.GateOutput, error) {
	return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "ok"}, nil
}

// BenchmarkAuthorizeComplete is the two-phase form of the same call (the
// callable runs in the caller): against BenchmarkInvoke_FakeGates it shows
// what the permit book adds, in time and in what it keeps (retained-B/op:
// a completed permit is kept, to be refused again, for two minutes).
func BenchmarkAuthorizeComplete(b *testing.B) {
	e := newEnv(b, []binding{hard("a", noRecord{}), hard("b", noRecord{}), hard("c", noRecord{})})
	call := controller.Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"git status","timeout":30}`)}
	ctx := context.Background()
	op := e.opctx("bash")
	heap := heapRetained()
	b.ReportAllocs()
	b.ResetTimer()
	cpu, faults := processCPU(), processFaults()
	defer func() {
		reportCallCost(b, cpu, faults, heap)
		runtime.KeepAlive(e) // NB: its store and its permit book hold what the calls retained
	}()
	for i := 0; i < b.N; i++ {
		if i%100 == 0 {
			op.ChainID = uuid.New()
		}
		op.OperationID = uuid.New()
		p, err := e.ctl.Authorize(ctx, call, op)
		if err != nil {
			b.Fatal(err)
		}
		if err := e.ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: op.TaskBoundaryID}); err != nil {
			b.Fatal(err)
		}
	}
}
