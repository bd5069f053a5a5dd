package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	rc    wazero.RuntimeConfig // WithCloseOnContextDone: Extism and non-instrumentable modules
	rt    wazero.Runtime       // runs rc
	fast  wazero.Runtime       // instrumented native modules (see host/internal/interrupt)

	mu       sync.Mutex
	modules  map[string]*Module     // by digest
	gates    map[gateKey]*gateEntry // by (module digest, config digest)
	closed   atomic.Bool
	inflight atomic.Int64 // Evaluate calls in progress
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
func (h *Host) Load(ctx context.Context, wasm []byte, expectedSHA256 string) (*Module, error) {
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
	m, err := h.compile(ctx, wasm, digest)
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

// compileNative compiles wasm instrumented for cheap interruption on the
// fast runtime, or as it is on the WithCloseOnContextDone runtime when it
// cannot be instrumented; the result says which runtime owns it.
func (h *Host) compileNative(ctx context.Context, wasm []byte) (wazero.CompiledModule, wazero.Runtime, error) {
	if extism, _ := interrupt.ImportsModule(wasm, abi.ImportModuleExtism); extism {
		// Extism runs it on its own runtime with h.rc: compiling it with
		// h.rc here fills the cache that Extism's compile then hits.
		cm, err := h.rt.CompileModule(ctx, wasm)
		return cm, h.rt, err
	}
	if instrumented, err := interrupt.Instrument(wasm); err == nil {
		if cm, err := h.fast.CompileModule(ctx, instrumented); err == nil {
			return cm, h.fast, nil
		}
	}
	cm, err := h.rt.CompileModule(ctx, wasm)
	return cm, h.rt, err
}

func (h *Host) compile(ctx context.Context, wasm []byte, digest string) (*Module, error) {
	cm, rt, err := h.compileNative(ctx, wasm)
	if err != nil {
		return nil, &GuestError{Code: CodeInvalidModule, Op: "load", Digest: digest, reason: "not a valid Wasm module"}
	}
	kind, err := detectKind(cm)
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
	case KindExtism:
		ex, err := extismrt.Check(cm)
		_ = cm.Close(ctx) // Extism compiles it in its own runtime (a cache hit)
		if err != nil {
			return nil, err
		}
		c, err := extismrt.Compile(ctx, wasm, h.rc, ex, extismrt.Params{
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

func (h *Host) nativeParams() native.Params {
	return native.Params{
		MemoryLimitPages: uint32(h.cfg.memoryPages),
		CallTimeout:      h.cfg.callTimeout,
		MaxOutputBytes:   h.cfg.maxOutputBytes,
	}
}
