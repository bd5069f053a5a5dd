package host_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

var (
	benchOnce sync.Once
	benchH    *host.Host
)

// benchHost is a host with a generous call timeout, so that a loaded
// machine cannot turn a slow call into a benchmark failure. It is closed
// by TestMain's process exit.
func benchHost(b *testing.B) *host.Host {
	benchOnce.Do(func() {
		h, err := host.New(context.Background(), host.NewConfig().
			WithCompilationCacheDir(cacheDir()).
			WithCallTimeout(10*time.Second))
		if err != nil {
			panic(err)
		}
		benchH = h
	})
	return benchH
}

// benchInput is a realistic small request (about 400 bytes of JSON).
func benchInput() abi.GateInput {
	in := input("read")
	in.Operation = "read"
	in.Arguments = []byte(`{"path":"notes/a.txt"}`)
	in.ArgumentOrder = []string{"path"}
	in.Cwd = "/work"
	in.Paths = []abi.PathFact{{Arg: "path", Raw: "notes/a.txt", Resolved: "/work/notes/a.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: "/work/notes/a.txt"}}
	in.Context = abi.OperationInfo{OperationID: "op-1", Actor: &abi.ActorRef{Kind: "user", ID: "ana"}, RunID: "run-1", ToolCallID: "call-1"}
	return in
}

// BenchmarkGate_Evaluate: one warm call through the pool. abi=native vs
// abi=extism run the same trivial logic (deny when the input names
// web_fetch, on raw bytes); logic=sdk is the example gate built with the Go
// SDK (full GateInput decoding), logic=c the C gate, logic=wat the smallest
// possible guest.
func BenchmarkGate_Evaluate(b *testing.B) {
	h := benchHost(b)
	for _, c := range []struct{ name, fixture, config string }{
		{"abi=native/logic=trivial", "trivial_go.wasm", ""},
		{"abi=extism/logic=trivial", "extism_gate.wasm", `{"mode":"trivial"}`},
		{"abi=native/logic=sdk", "toolgate.wasm", `{"deny_tools":["web_fetch"],"allowed_roots":["/work"]}`},
		{"abi=extism/logic=pdk_json", "extism_gate.wasm", `{"deny_tools":["web_fetch"]}`},
		{"abi=native/logic=c", "c_gate.wasm", ""},
		{"abi=native/logic=wat", "allow.wasm", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := gate(b, h, c.fixture, c.config)
			in := benchInput()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := g.EvaluateChain(ctx, "bench", in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkABI_Overhead compares Gate.Evaluate with a bare wazero call of the
// same export with the same payload (pre-encoded bytes written into guest
// memory, the answer read back, no JSON, no pool, no deadline). The bare
// runtime uses the same WithCloseOnContextDone setting as the host
// (close=true), and close=false shows what that setting costs by itself.
func BenchmarkABI_Overhead(b *testing.B) {
	ctx := context.Background()
	in := benchInput()
	payload, err := abi.AppendGateInput(nil, &in)
	if err != nil {
		b.Fatal(err)
	}
	for _, fixture := range []string{"trivial_go.wasm", "allow.wasm"} {
		for _, closeOnDone := range []bool{true, false} {
			name := "fixture=" + fixture + "/path=bare"
			if closeOnDone {
				name += "/close=true"
			} else {
				name += "/close=false"
			}
			b.Run(name, func(b *testing.B) {
				rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(closeOnDone))
				defer rt.Close(ctx)
				wasi_snapshot_preview1.MustInstantiate(ctx, rt)
				cm, err := rt.CompileModule(ctx, wasmfixtures.Bytes(fixture))
				if err != nil {
					b.Fatal(err)
				}
				cfg := wazero.NewModuleConfig()
				if _, ok := cm.ExportedFunctions()["_initialize"]; ok {
					cfg = cfg.WithStartFunctions("_initialize")
				}
				mod, err := rt.InstantiateModule(ctx, cm, cfg)
				if err != nil {
					b.Fatal(err)
				}
				res, err := mod.ExportedFunction(abi.ExportAlloc).Call(ctx, 4096)
				if err != nil {
					b.Fatal(err)
				}
				ptr := uint32(res[0])
				eval, mem := mod.ExportedFunction(abi.ExportEvaluate), mod.Memory()
				stack := make([]uint64, 2)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					mem.Write(ptr, payload)
					stack[0], stack[1] = uint64(ptr), uint64(len(payload))
					if err := eval.CallWithStack(ctx, stack); err != nil {
						b.Fatal(err)
					}
					if _, ok := mem.Read(abi.UnpackPtrLen(stack[0])); !ok {
						b.Fatal("bad output range")
					}
				}
			})
		}
		b.Run("fixture="+fixture+"/path=host", func(b *testing.B) {
			g := gate(b, benchHost(b), fixture, "")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := g.EvaluateChain(ctx, "bench", in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHost_ColdLoad measures a process restart: a new Host, Load of the
// Go-built example gate, its first Gate (one instance, configured) and one
// call; cache=warm reads compiled code from an on-disk compilation cache
// filled beforehand, cache=none compiles from scratch.
func BenchmarkHost_ColdLoad(b *testing.B) {
	ctx := context.Background()
	wasm := wasmfixtures.Bytes("toolgate.wasm")
	in := benchInput()
	run := func(b *testing.B, cfg host.Config) {
		h, err := host.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close(ctx)
		m, err := h.Load(ctx, wasm, host.AnyDigest)
		if err != nil {
			b.Fatal(err)
		}
		g, err := h.Gate(ctx, m, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := g.Evaluate(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("cache=warm", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "cache")
		cfg := host.NewConfig().WithCompilationCacheDir(dir).WithPoolSize(1)
		run(b, cfg) // fill the cache
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			run(b, cfg)
		}
	})
	b.Run("cache=none", func(b *testing.B) {
		cfg := host.NewConfig().WithPoolSize(1)
		for i := 0; i < b.N; i++ {
			run(b, cfg)
		}
	})
}

// BenchmarkGate_Concurrent runs 16 callers against one gate (pool size =
// GOMAXPROCS): ns/op is wall time per call across all callers, so it should
// fall with the number of cores (compare callers=1).
func BenchmarkGate_Concurrent(b *testing.B) {
	ctx := context.Background()
	h := benchHost(b)
	for _, c := range []struct{ name, fixture string }{
		{"logic=sdk", "toolgate.wasm"},
		{"logic=trivial", "trivial_go.wasm"},
	} {
		g := gate(b, h, c.fixture, "")
		in := benchInput()
		// Warm the pool to its full size.
		var wg sync.WaitGroup
		for i := 0; i < h2(); i++ {
			wg.Add(1)
			go func() { defer wg.Done(); _, _ = g.EvaluateChain(ctx, "bench", in) }()
		}
		wg.Wait()
		b.Run(c.name+"/callers=1", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := g.EvaluateChain(ctx, "bench", in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/callers=2", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(1)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.EvaluateChain(ctx, "bench", in); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(c.name+"/callers=16", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16 / max(1, h2()))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.EvaluateChain(ctx, "bench", in); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func h2() int { return host.DefaultPoolSize() }

// BenchmarkGate_Isolation: what each isolation mode costs a warm call, one
// caller. chain=same: every call of one task chain (no reset); chain=alternating:
// two chains take turns on one instance (a reset per call, like call
// isolation); chain=alternating/pool=2: the same with room for a second
// instance, which chain affinity gives the second chain (no reset); shared:
// never reset (trusted modules only). Native modules
// reset from a memory snapshot (a copy of the instance's memory: ~2.5 MiB
// for a Go-built guest); Extism instances are replaced.
func BenchmarkGate_Isolation(b *testing.B) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(cacheDir()).WithCallTimeout(10*time.Second).WithPoolSize(1))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	h2, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(cacheDir()).WithCallTimeout(10*time.Second).WithPoolSize(2))
	if err != nil {
		b.Fatal(err)
	}
	defer h2.Close(ctx)
	in := benchInput()
	for _, c := range []struct{ name, fixture, config string }{
		{"abi=native/logic=wat", "allow.wasm", ""},
		{"abi=native/logic=trivial_go", "trivial_go.wasm", ""},
		{"abi=native/logic=sdk", "toolgate.wasm", ""},
		{"abi=extism/logic=trivial_go", "extism_gate.wasm", `{"mode":"trivial"}`},
	} {
		m, err := h.Load(ctx, wasmfixtures.Bytes(c.fixture), host.AnyDigest)
		if err != nil {
			b.Fatal(err)
		}
		m2, err := h2.Load(ctx, wasmfixtures.Bytes(c.fixture), host.AnyDigest)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name   string
			iso    host.Isolation
			chains []string
			pool2  bool
		}{
			{"shared", host.IsolationShared, []string{"a", "b"}, false},
			{"chain=same", host.IsolationChain, []string{"a"}, false},
			{"chain=alternating", host.IsolationChain, []string{"a", "b"}, false},
			{"chain=alternating/pool=2", host.IsolationChain, []string{"a", "b"}, true},
			{"call", host.IsolationCall, []string{"a"}, false},
		} {
			hm, mm := h, m
			if mode.pool2 {
				hm, mm = h2, m2
			}
			g, err := hm.GateWith(ctx, mm, []byte(c.config), host.GateOptions{Isolation: mode.iso, Binding: mode.name})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(c.name+"/isolation="+mode.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := g.EvaluateChain(ctx, mode.chains[i%len(mode.chains)], in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
