package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/extismrt"
	"github.com/govhost/govhost/host/internal/fault"
	"github.com/govhost/govhost/host/internal/interrupt"
	"github.com/govhost/govhost/host/internal/native"
)

// AnyDigest, passed as the expected digest to Load, accepts any module
// bytes and pins the digest they hash to. Use it only for tooling (plugin
// check) and tests: a policy always pins the digest it expects.
const AnyDigest = "any"

// Host loads and runs gate modules. It is safe for concurrent use; the
// caller must Close it.
type Host struct {
	cfg   Config
	cache wazero.CompilationCache
	instr instrumentCache      // on disk beside cache when cfg.cacheDir is set
	rc    wazero.RuntimeConfig // WithCloseOnContextDone: Extism modules (Extism's SDK runs them)
	rt    wazero.Runtime       // runs rc: compiles Extism modules into the shared cache
	fast  wazero.Runtime       // native modules; all modules are instrumented (host/internal/interrupt)

	mu        sync.Mutex
	modules   map[string]*Module     // by digest
	gates     map[gateKey]*gateEntry // by (module digest, config digest)
	closed    atomic.Bool
	inflight  atomic.Int64   // Evaluate calls in progress
	compiling sync.WaitGroup // compilations in progress (Add under mu, while not closed)
}

// New returns a Host with the given configuration, or an error wrapping
// ErrInvalidConfig, or the compilation cache directory's error.
func New(ctx context.Context, cfg Config) (*Host, error) {
	cfg, err := cfg.resolved()
	if err != nil {
		return nil, err
	}
	var cache wazero.CompilationCache
	if cfg.cacheDir != "" {
		if cache, err = wazero.NewCompilationCacheWithDir(cfg.cacheDir); err != nil {
			return nil, fmt.Errorf("host: compilation cache: %w", err)
		}
	} else {
		cache = wazero.NewCompilationCache()
	}
	// NB: memory is capped by host/internal/memcap, not by the runtime's
	// page limit, so that a refused growth is seen and reported as
	// gate.memory_limit. Debug info is off: trap texts are never shown.
	rc := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(true).
		WithDebugInfoEnabled(false)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	fast := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithDebugInfoEnabled(false))
	for _, r := range []wazero.Runtime{rt, fast} {
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, r); err != nil {
			_ = rt.Close(ctx)
			_ = fast.Close(ctx)
			_ = cache.Close(ctx)
			return nil, fmt.Errorf("host: wasi: %w", err)
		}
	}
	return &Host{
		cfg:     cfg,
		cache:   cache,
		instr:   newInstrumentCache(cfg.cacheDir),
		rc:      rc,
		rt:      rt,
		fast:    fast,
		modules: make(map[string]*Module),
		gates:   make(map[gateKey]*gateEntry),
	}, nil
}

// Close stops every gate and releases every module. Later calls return
// ErrClosed; Close first waits for the calls in flight to end, at most the
// call timeout (1 s when there is none, after which they fail). Safe to call
// more than once.
func (h *Host) Close(ctx context.Context) error {
	if h.closed.Swap(true) {
		return nil
	}
	// NB: releasing a module while a guest runs in it is unsafe; every call
	// ends within the call timeout, so wait for them that long.
	wait := h.cfg.callTimeout
	if wait <= 0 {
		wait = time.Second
	}
	for deadline := time.Now().Add(wait + 100*time.Millisecond); h.inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	// NB: a compilation cannot be stopped; closing the runtime under it is
	// unsafe, so wait for every one (Load adds to compiling under mu only
	// while the host is open: after this lock no new one starts).
	h.mu.Lock()
	h.mu.Unlock()
	h.compiling.Wait()
	h.mu.Lock()
	gates, modules := h.gates, h.modules
	h.gates, h.modules = map[gateKey]*gateEntry{}, map[string]*Module{}
	h.mu.Unlock()
	for _, e := range gates {
		if e.gate != nil {
			e.gate.pool.Close()
		}
	}
	for _, m := range modules {
		m.close(ctx)
	}
	err := h.rt.Close(ctx)
	if ferr := h.fast.Close(ctx); err == nil {
		err = ferr
	}
	if cerr := h.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// compileBounded runs compile within bound (0: none) and ctx. wazero cannot
// stop a compilation that has started: past the bound the compilation
// continues in the background (Close waits for it) and its result is
// released when it ends.
func (h *Host) compileBounded(ctx context.Context, wasm []byte, digest string, bound time.Duration) (*Module, error) {
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	h.compiling.Add(1)
	h.mu.Unlock()
	if bound <= 0 && ctx.Done() == nil {
		defer h.compiling.Done()
		return h.compile(ctx, wasm, digest)
	}
	type result struct {
		m   *Module
		err error
	}
	results := make(chan result, 1)
	var abandoned atomic.Bool
	release := func() {
		select {
		case r := <-results:
			if r.m != nil {
				r.m.close(context.Background())
			}
		default:
		}
	}
	go func() {
		defer h.compiling.Done()
		m, err := h.compile(context.WithoutCancel(ctx), wasm, digest)
		results <- result{m, err}
		if abandoned.Load() {
			release()
		}
	}()
	var expired <-chan time.Time
	if bound > 0 {
		t := time.NewTimer(bound)
		defer t.Stop()
		expired = t.C
	}
	select {
	case r := <-results:
		return r.m, r.err
	case <-expired:
		abandoned.Store(true)
		release()
		return nil, fault.New(fault.LoadTimeout, "load", "loading the module took longer than the load timeout")
	case <-ctx.Done():
		abandoned.Store(true)
		release()
		code := fault.Canceled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			code = fault.LoadTimeout
		}
		return nil, fault.FromCode(code, "load")
	}
}

// LoadFile reads path and loads it as Load does.
func (h *Host) LoadFile(ctx context.Context, path, expectedSHA256 string) (*Module, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return h.Load(ctx, b, expectedSHA256)
}

// Load compiles wasm once per process (the same digest returns the same
// *Module) after checking that it hashes to expectedSHA256 (hex, any case).
// An empty expected digest is refused with ErrDigestRequired; AnyDigest
// trusts the bytes. A mismatch is a *DigestMismatchError. A module that is
// not a valid gate (not Wasm, unknown imports, missing exports, a memory
// larger than the cap) is a *GuestError.
//
// Load is bounded by the configured load timeout (WithLoadTimeout) and the
// structural limits (WithModuleLimits); a module over them is a *GuestError
// (gate.load_timeout, gate.too_many_functions, ...).
func (h *Host) Load(ctx context.Context, wasm []byte, expectedSHA256 string) (*Module, error) {
	return h.load(ctx, wasm, expectedSHA256, h.cfg.loadTimeout)
}

// LoadTrusted loads a module that ships with the program (the built-in
// gates embedded in the binary) as Load does, with every limit but the load
// timeout: compiling a Go-built module takes tens of seconds on a loaded
// machine under -race, and such a module is not an attacker's. Only ctx
// bounds it.
//
// Its instances' setup (the Go runtime's start, gate_configure) is bounded
// by the load timeout rather than the per-call one: a Go-built guest's
// start has passed a second on two busy cores under -race, and failed the
// built-in gates closed. Every evaluation keeps the per-call bound.
func (h *Host) LoadTrusted(ctx context.Context, wasm []byte, expectedSHA256 string) (*Module, error) {
	m, err := h.load(ctx, wasm, expectedSHA256, 0)
	if err == nil {
		m.trusted.Store(true) // these bytes are the program's own, however they were first loaded
	}
	return m, err
}

func (h *Host) load(ctx context.Context, wasm []byte, expectedSHA256 string, bound time.Duration) (*Module, error) {
	if h.closed.Load() {
		return nil, ErrClosed
	}
	if expectedSHA256 == "" {
		return nil, ErrDigestRequired
	}
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])
	if expectedSHA256 != AnyDigest && !strings.EqualFold(strings.TrimPrefix(expectedSHA256, "sha256:"), digest) {
		return nil, &DigestMismatchError{Expected: expectedSHA256, Actual: digest}
	}
	h.mu.Lock()
	m, ok := h.modules[digest]
	h.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := h.compileBounded(ctx, wasm, digest, bound)
	if err != nil {
		return nil, guestError(err, digest)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed.Load() {
		m.close(ctx)
		return nil, ErrClosed
	}
	if prev, ok := h.modules[digest]; ok { // lost a race: keep the first
		m.close(ctx)
		return prev, nil
	}
	h.modules[digest] = m
	return m, nil
}

// compile checks and instruments wasm (host/internal/interrupt), then
// compiles it: native modules on the fast runtime, Extism modules on the
// WithCloseOnContextDone runtime whose configuration Extism's own runtime
// shares (so Extism's compile is a cache hit).
func (h *Host) compile(ctx context.Context, wasm []byte, digest string) (*Module, error) {
	extism, _ := interrupt.ImportsModule(wasm, abi.ImportModuleExtism)
	res, err := h.instr.instrument(wasm, digest, h.cfg.interruptOptions())
	if err != nil {
		return nil, instrumentError(err)
	}
	if capBytes := uint64(h.cfg.memoryPages) * 65536; res.MemoryMinPages*65536+res.TableEntries*8 > capBytes {
		return nil, fault.New(fault.MemoryLimit, "load", "declared memory and tables exceed the memory cap")
	}
	rt := h.fast
	if extism {
		rt = h.rt
	}
	cm, err := rt.CompileModule(ctx, res.Wasm)
	if err != nil {
		return nil, fault.New(fault.InvalidModule, "load", "not a valid Wasm module")
	}
	kind, err := h.checkImports(cm)
	if err != nil {
		_ = cm.Close(ctx)
		return nil, err
	}
	m := &Module{host: h, digest: digest, kind: kind, size: len(wasm), exports: exportNames(cm)}
	switch kind {
	case KindNative:
		ex, err := native.Check(cm, uint32(h.cfg.memoryPages))
		if err != nil {
			_ = cm.Close(ctx)
			return nil, err
		}
		m.compiled, m.nativeEx, m.runtime = cm, ex, rt
		m.nativeState = native.State{Resettable: res.Resettable, MutableGlobals: res.MutableGlobals}
	case KindExtism:
		ex, err := extismrt.Check(cm)
		_ = cm.Close(ctx) // Extism compiles it in its own runtime (a cache hit)
		if err != nil {
			return nil, err
		}
		c, err := extismrt.Compile(ctx, res.Wasm, h.rc, ex, extismrt.Params{
			MemoryLimitPages: uint32(h.cfg.memoryPages),
			CallTimeout:      h.cfg.callTimeout,
			MaxOutputBytes:   h.cfg.maxOutputBytes,
		})
		if err != nil {
			return nil, err
		}
		m.extism, m.extismEx = c, ex
	}
	return m, nil
}

// instrumentError maps a refusal of the instrumentation pass to its code.
func instrumentError(err error) error {
	var le *interrupt.LimitError
	switch {
	case errors.As(err, &le):
		return fault.New("gate."+le.What, "load", le.Error()[len("interrupt: "):])
	case errors.Is(err, interrupt.ErrReservedName):
		return fault.New(fault.ReservedName, "load", "exports a name the host reserves ("+interrupt.ReservedPrefix+"...)")
	case errors.Is(err, interrupt.ErrBadImport):
		return fault.New(fault.BadImport, "load", "imports a global, table, memory or tag")
	}
	return fault.New(fault.InvalidModule, "load", "not a valid Wasm module, or uses a feature the host does not run")
}

func (h *Host) nativeParams(m *Module) native.Params {
	p := native.Params{
		MemoryLimitPages: uint32(h.cfg.memoryPages),
		CallTimeout:      h.cfg.callTimeout,
		MaxOutputBytes:   h.cfg.maxOutputBytes,
	}
	if m.trusted.Load() {
		p.SetupTimeout = DefaultLoadTimeout
	}
	return p
}
