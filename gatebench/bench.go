package gatebench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/govhost/govhost/host"
)

// Options tune a run. Zero values take the defaults.
type Options struct {
	// Iterations is the number of timed calls (default 2000), after Warmup
	// untimed ones (default 200).
	Iterations, Warmup int
	// ColdRuns is how many times each cold load is measured (default 3;
	// the median is reported).
	ColdRuns int
	// Host is the base configuration of every host the run creates (call
	// timeout, memory cap); the compilation cache is set by the run.
	Host host.Config
}

func (o Options) withDefaults() Options {
	if o.Iterations <= 0 {
		o.Iterations = 2000
	}
	if o.Warmup <= 0 {
		o.Warmup = 200
	}
	if o.ColdRuns <= 0 {
		o.ColdRuns = 3
	}
	return o
}

// Module is one module to measure.
type Module struct {
	Name string // how the report names it (a path or a built-in's name)
	Wasm []byte
	// Trusted loads it with host.LoadTrusted (a built-in gate: no load
	// timeout) instead of host.Load.
	Trusted bool
}

// Result is the measurement of one module. Durations are in nanoseconds in
// JSON.
type Result struct {
	Module string `json:"module"`
	SHA256 string `json:"sha256"`
	Kind   string `json:"abi_kind"`
	Size   int    `json:"size_bytes"`
	// ColdLoad is load + first configured instance on a fresh host without
	// a compilation cache; ColdLoadCached the same with a warm on-disk
	// cache (a restart).
	ColdLoad       time.Duration `json:"cold_load_ns"`
	ColdLoadCached time.Duration `json:"cold_load_cached_ns"`
	// Per warm call (host.Gate.Evaluate: input encoding, the guest call,
	// output decoding).
	Min    time.Duration `json:"call_min_ns"`
	Median time.Duration `json:"call_median_ns"`
	P99    time.Duration `json:"call_p99_ns"`
	Calls  int           `json:"calls"`
	// MemoryBytes is one instance's linear memory after the calls.
	MemoryBytes uint64 `json:"instance_memory_bytes"`
	// Decisions counts the verdicts of the timed calls, by decision and
	// reason code, so a comparison shows whether the modules agreed.
	Decisions map[string]int `json:"decisions"`
}

// Run measures each module on the same workload, one after the other, in
// this process.
func Run(ctx context.Context, modules []Module, w Workload, opts Options) ([]Result, error) {
	if len(w.Inputs) == 0 {
		return nil, ErrNoInputs
	}
	opts = opts.withDefaults()
	out := make([]Result, 0, len(modules))
	for _, m := range modules {
		r, err := measure(ctx, m, w, opts)
		if err != nil {
			return out, fmt.Errorf("gatebench: %s: %w", m.Name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func measure(ctx context.Context, m Module, w Workload, opts Options) (Result, error) {
	res := Result{Module: m.Name, Size: len(m.Wasm), Decisions: map[string]int{}}
	cacheDir, err := os.MkdirTemp("", "govhost-bench-cache-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(cacheDir)

	cold := make([]time.Duration, 0, opts.ColdRuns)
	for i := 0; i < opts.ColdRuns; i++ {
		d, err := coldLoad(ctx, opts.Host.WithPoolSize(1), m, w.Config)
		if err != nil {
			return res, err
		}
		cold = append(cold, d)
	}
	res.ColdLoad = median(cold)

	cached := opts.Host.WithPoolSize(1).WithCompilationCacheDir(cacheDir)
	if _, err := coldLoad(ctx, cached, m, w.Config); err != nil { // fills the cache
		return res, err
	}
	cold = cold[:0]
	for i := 0; i < opts.ColdRuns; i++ {
		d, err := coldLoad(ctx, cached, m, w.Config)
		if err != nil {
			return res, err
		}
		cold = append(cold, d)
	}
	res.ColdLoadCached = median(cold)

	h, err := host.New(ctx, cached)
	if err != nil {
		return res, err
	}
	defer h.Close(ctx)
	mod, err := load(ctx, h, m)
	if err != nil {
		return res, err
	}
	res.SHA256, res.Kind = mod.Digest(), string(mod.Kind())
	g, err := h.Gate(ctx, mod, w.Config)
	if err != nil {
		return res, err
	}
	for i := 0; i < opts.Warmup; i++ {
		if _, err := g.Evaluate(ctx, w.Inputs[i%len(w.Inputs)]); err != nil {
			return res, err
		}
	}
	times := make([]time.Duration, opts.Iterations)
	for i := range times {
		in := w.Inputs[i%len(w.Inputs)]
		start := time.Now()
		out, err := g.Evaluate(ctx, in)
		times[i] = time.Since(start)
		if err != nil {
			return res, err
		}
		res.Decisions[string(out.Decision)+" "+out.ReasonCode]++
	}
	slices.Sort(times)
	res.Calls = len(times)
	res.Min, res.Median, res.P99 = times[0], times[len(times)/2], times[(len(times)*99)/100]
	if res.MemoryBytes, err = g.MemoryBytes(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// coldLoad times a fresh host's Load and first configured instance.
func coldLoad(ctx context.Context, cfg host.Config, mod Module, config json.RawMessage) (time.Duration, error) {
	h, err := host.New(ctx, cfg)
	if err != nil {
		return 0, err
	}
	defer h.Close(ctx)
	start := time.Now()
	m, err := load(ctx, h, mod)
	if err != nil {
		return 0, err
	}
	if _, err := h.Gate(ctx, m, config); err != nil {
		var ge *host.GuestError
		if errors.As(err, &ge) {
			return 0, fmt.Errorf("the gate refuses the configuration or cannot start: %w", err)
		}
		return 0, err
	}
	return time.Since(start), nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func load(ctx context.Context, h *host.Host, m Module) (*host.Module, error) {
	if m.Trusted {
		return h.LoadTrusted(ctx, m.Wasm, host.AnyDigest)
	}
	return h.Load(ctx, m.Wasm, host.AnyDigest)
}
