package govhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/policyfile"
)

// benchPolicy binds all three built-in gates to one tool, as a typical
// coding agent's bash tool would be governed.
func benchPolicy(id uuid.UUID, root string) string {
	return fmt.Sprintf(`{"policy_id": %q, "version": "bench", "gates": [
    {"gate_id": "permission", "module": "permission", "level": "hard", "order": 1, "tool_ids": ["bash"], "config": {"lionagi": {"mode": "rules", "allow": {"bash": ["ls *"]}}}},
    {"gate_id": "pathguard", "module": "pathguard", "level": "hard", "order": 2, "tool_ids": ["bash"], "config": {"kind": "guard_paths", "allowed_paths": [%q]}},
    {"gate_id": "destructive", "module": "destructive", "level": "advisory", "order": 3, "tool_ids": ["bash"]}]}`, id, root)
}

var benchArgs = json.RawMessage(`{"command":"ls -la src"}`)

type benchEnv struct {
	ctl   *controller.InvocationController
	m     *controller.Manager
	snap  governance.PolicySnapshot
	gates []controller.Gate
	eng   *govhost.Engine
}

func newBenchEnv(b *testing.B, store evidence.Store) *benchEnv {
	b.Helper()
	return newBenchEnvIn(b, b.TempDir(), store)
}

// newBenchEnvIn is newBenchEnv on the data directory dir.
func newBenchEnvIn(b *testing.B, dir string, store evidence.Store) *benchEnv {
	b.Helper()
	ctx := context.Background()
	eng, err := govhost.Open(ctx, govhost.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close(ctx) })
	root := b.TempDir()
	snap, err := policyfile.Load([]byte(benchPolicy(uuid.New(), root)), "bench.json", eng.Gates.Resolver(root))
	if err != nil {
		b.Fatal(err)
	}
	policies := policy.NewMemStore(eng.Gates)
	if err := policies.Put(ctx, snap); err != nil {
		b.Fatal(err)
	}
	if snap, err = policies.Activate(ctx, snap.PolicyID(), snap.Version(), nil, time.Now()); err != nil {
		b.Fatal(err)
	}
	ctl, err := eng.NewController(controller.Config{Evidence: store, Policies: policies})
	if err != nil {
		b.Fatal(err)
	}
	m := controller.NewManager()
	noop := func(context.Context, map[string]any) (any, error) { return nil, nil }
	if err := m.Register(controller.Tool{ID: "bash", Fn: noop}); err != nil {
		b.Fatal(err)
	}
	if err := m.Govern(ctl, controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}); err != nil {
		b.Fatal(err)
	}
	env := &benchEnv{ctl: ctl, m: m, snap: snap, eng: eng}
	for _, bind := range snap.GateBindings() {
		g, err := eng.Gates.GateFor(ctx, bind)
		if err != nil {
			b.Fatal(err)
		}
		env.gates = append(env.gates, g)
	}
	return env
}

func (e *benchEnv) invoke(b *testing.B, task *controller.Task) {
	opctx, err := task.Context("bash")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.m.Invoke(context.Background(), controller.Call{Tool: "bash", Operation: "execute_command", Arguments: benchArgs, Cwd: "/"}, &opctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGovernedInvoke/store=memory is one governed call of a no-op
// tool through the three built-in Wasm gates with the in-memory evidence
// store (six records a call). BenchmarkBareGates is the three gates called
// directly on the same input: the reference for the controller's overhead
// ratio (target ≤ 2.5×).
func BenchmarkGovernedInvoke(b *testing.B) {
	b.Run("store=memory", func(b *testing.B) {
		e := newBenchEnv(b, evidence.NewMemStore())
		var task *controller.Task
		b.ReportAllocs()
		b.ResetTimer()
		cpu := processCPU() // NB: includes opening a task every 100 calls
		for i := 0; i < b.N; i++ {
			if i%100 == 0 { // tasks of 100 operations, as an agent's would be
				b.StopTimer()
				var err error
				if task, err = e.ctl.OpenTask(context.Background(), controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			e.invoke(b, task)
		}
		b.ReportMetric(float64(processCPU()-cpu)/1e3/float64(b.N), "cpu-µs/op")
	})
	// The same 64 tasks with evidence in memory: the CPU the call costs on
	// two cores, without the WAL.
	b.Run("store=memory/tasks=64", func(b *testing.B) {
		concurrentTasks(b, newBenchEnv(b, evidence.NewMemStore()))
	})
	b.Run("store=pebble/tasks=64", func(b *testing.B) {
		e := newBenchEnv(b, nil)
		e.ctl, _ = e.eng.NewController(controller.Config{Policies: policiesOf(b, e)})
		e.m = controller.NewManager()
		_ = e.m.Register(controller.Tool{ID: "bash", Fn: func(context.Context, map[string]any) (any, error) { return nil, nil }})
		_ = e.m.Govern(e.ctl, controller.PolicyPin{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()})
		concurrentTasks(b, e)
	})
}

// policiesOf returns a memory policy store holding e's active snapshot.
func policiesOf(b *testing.B, e *benchEnv) policy.Store {
	ctx := context.Background()
	ps := policy.NewMemStore(e.eng.Gates)
	staged, err := governance.NewPolicySnapshot(e.snap.PolicyID(), e.snap.Version(), e.snap.GateBindings())
	if err != nil {
		b.Fatal(err)
	}
	if err := ps.Put(ctx, staged); err != nil {
		b.Fatal(err)
	}
	if _, err := ps.Activate(ctx, e.snap.PolicyID(), e.snap.Version(), nil, time.Now()); err != nil {
		b.Fatal(err)
	}
	return ps
}

func BenchmarkBareGates(b *testing.B) {
	e := newBenchEnv(b, evidence.NewMemStore())
	args, err := governance.ParseArguments(benchArgs)
	if err != nil {
		b.Fatal(err)
	}
	call := controller.Call{Tool: "bash", Operation: "execute_command", Arguments: benchArgs, Cwd: "/"}
	ins := make([]abi.GateInput, len(e.gates))
	for i, bind := range e.snap.GateBindings() {
		ins[i] = controller.NewGateInput(call, args, nil, bind.GateID(), abi.PhaseCheck)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, g := range e.gates {
			if _, err := g.Evaluate(ctx, ins[j]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// concurrentTasks runs b.N governed calls from 64 goroutines, each in a
// task of its own, and reports operations a second.
func concurrentTasks(b *testing.B, e *benchEnv) {
	var done atomic.Int64
	b.SetParallelism(32) // 64 goroutines on two cores
	b.ResetTimer()
	start, cpu0, faults0 := time.Now(), processCPU(), processFaults()
	b.RunParallel(func(pb *testing.PB) {
		task, err := e.ctl.OpenTask(context.Background(), controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()})
		if err != nil {
			b.Fatal(err)
		}
		for pb.Next() {
			e.invoke(b, task)
			done.Add(1)
		}
	})
	b.ReportMetric(float64(done.Load())/time.Since(start).Seconds(), "ops/s")
	// CPU time a call (this process, every goroutine, Pebble's included):
	// unlike ops/s, a figure other load on the machine inflates little.
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(done.Load()), "cpu-µs/op")
	// Fresh pages touched a call (memtable arenas, heap growth, ...): what
	// the CPU a call pays the kernel for, counted rather than timed.
	b.ReportMetric(float64(processFaults()-faults0)/float64(done.Load()), "minflt/op")
}
