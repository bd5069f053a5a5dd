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
	"github.com/govhost/govhost/governance"
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
	fast  wazero.Runtime       // native modules; all modules are instrumented (host/internal/interrupt)
	// rt runs rc: it compiles Extism modules into the shared cache, so
	// that Extism's own runtime (same configuration) finds them there. It
	// only compiles (nothing is instantiated in it, so it has no WASI) and
	// is made at the first Extism load (extismRuntime): a host that runs
	// only native modules, the built-ins among them, never pays for it.
	rtOnce sync.Once
	rt     wazero.Runtime // nil until then

	mu        sync.Mutex
	modules   map[string]*Module     // by digest
	loading   map[string]*loadCall   // loads in progress, by digest
	gates     map[gateKey]*gateEntry // by (module digest, config digest)
	closed    atomic.Bool
	inflight  atomic.Int64   // Evaluate calls in progress
	compiling sync.WaitGroup // loads in progress (Add under mu, while not closed)
	slots     chan struct{}  // one per compilation running (WithCompileLimits)
	queued    atomic.Int64   // loads waiting for a slot
	compiles  atomic.Int64   // Compiles
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
	fast := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithDebugInfoEnabled(false))
	// NB: native guests are instantiated in fast, so WASI lives there
	// (once: instantiating it compiles its host functions).
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, fast); err != nil {
		_ = fast.Close(ctx)
		_ = cache.Close(ctx)
		return nil, fmt.Errorf("host: wasi: %w", err)
	}
	return &Host{
		cfg:     cfg,
		cache:   cache,
		instr:   newInstrumentCache(cfg.cacheDir),
		rc:      rc,
		fast:    fast,
		modules: make(map[string]*Module),
		loading: make(map[string]*loadCall),
		gates:   make(map[gateKey]*gateEntry),
		slots:   make(chan struct{}, cfg.compileSlots),
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
	// NB: a compilation stops only at its next function when its caller's
	// context ends; closing the runtime under it is unsafe, so wait for
	// every one (Load adds to compiling under mu only while the host is
	// open: after this lock no new one starts).
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
	err := h.fast.Close(ctx)
	h.rtOnce.Do(func() {}) // no Extism runtime is made after this
	if h.rt != nil {
		if rerr := h.rt.Close(ctx); err == nil {
			err = rerr
		}
	}
	if cerr := h.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// compileAdmitted compiles wasm within bound (0: none) and ctx once the
// host admits it: at most the configured number of compilations run at
// once (WithCompileLimits); a load that finds them all busy waits its turn,
// unless the queue is full, when it fails at once with ErrLoadBusy. A
// trusted load takes no slot: the slots bound what loads from outside can
// make the host spend, and the program's own modules (four built-ins, each
// loaded once) are not an attacker's. Queued behind two slots, a policy's
// built-ins loaded two at a time in whatever order their goroutines came,
// and a start whose largest module (permission, half the work) came last
// (1 of 20 traced) waited for another module's load before its own. When
// the bound passes the caller is answered at once; when
// the caller's context ends (an HTTP client hangs up, or its handler
// returns) wazero also stops compiling at its next function (one
// function's compile cannot be stopped; the structural limits bound it).
func (h *Host) compileAdmitted(ctx context.Context, wasm []byte, digest string, verify func() error, bound time.Duration, trusted bool) (*Module, error) {
	// NB: the bound ends the wait, not the compile: a compile nobody waits
	// for any more finishes (within its slot) and fills the compilation
	// cache, so the next load of the same bytes is quick instead of timing
	// out again from scratch. The caller's context ends both.
	wait := ctx
	if bound > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, bound)
		defer cancel()
	}
	if !trusted {
		if err := h.takeSlot(wait); err != nil {
			return nil, err
		}
	}
	if wait.Err() != nil {
		if !trusted {
			<-h.slots
		}
		return nil, loadEnded(wait)
	}
	// The compile keeps its slot until it really ends, even when its caller
	// has been answered: the CPU and memory of compiles nobody waits for
	// any more stay bounded by the slots.
	type result struct {
		m   *Module
		err error
	}
	results := make(chan result, 1)
	h.compiling.Add(1) // NB: the caller's load holds a count: never from zero under Close's Wait
	go func() {
		defer h.compiling.Done()
		m, err := h.compile(ctx, wasm, digest, verify)
		if !trusted {
			<-h.slots
		}
		results <- result{m, err}
	}()
	select {
	case r := <-results:
		return r.m, r.err
	case <-wait.Done():
		go func() { // abandoned: release what it made
			if r := <-results; r.m != nil {
				r.m.close(context.Background())
			}
		}()
		return nil, loadEnded(wait)
	}
}

// takeSlot takes a compile slot, waiting in the queue while wait lives
// when they are all taken; a full queue is ErrLoadBusy.
func (h *Host) takeSlot(wait context.Context) error {
	select {
	case h.slots <- struct{}{}:
		return nil
	default:
	}
	if n := h.queued.Add(1); n > int64(h.cfg.compileQueue) {
		h.queued.Add(-1)
		return ErrLoadBusy
	}
	defer h.queued.Add(-1)
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-wait.Done():
		return loadEnded(wait)
	}
}

// loadEnded is the failure of a load whose context ended: gate.load_timeout
// past a deadline (the load bound's or the caller's), gate.canceled when the
// caller went away.
func loadEnded(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fault.New(fault.LoadTimeout, "load", "loading the module took longer than the load timeout")
	}
	return fault.FromCode(fault.Canceled, "load")
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
	return h.load(ctx, wasm, expectedSHA256, h.cfg.loadTimeout, false)
}

// LoadTrusted loads a module that ships with the program (the built-in
// gates embedded in the binary) as Load does, with every limit but the load
// timeout and the compile slots: compiling a Go-built module takes tens of
// seconds on a loaded machine under -race, and such a module is not an
// attacker's. Only ctx bounds it, and it runs beside whatever else compiles
// (a policy's built-ins load all at once, not two at a time).
//
// It takes expectedSHA256 (when not AnyDigest) as the digest of wasm and
// hashes the bytes only when it has to read them: when no instrumented
// form of that digest is cached (host/instrumentcache.go), the bytes are
// hashed before the pass and a mismatch is a *DigestMismatchError as with
// Load. A warm start thus neither hashes nor touches a built-in's bytes
// (their digests are checked at build time: plugins/builtin). What runs
// is always the code the digest names: a cached entry was written only
// from bytes that hashed to it.
//
// Its instances' setup (the Go runtime's start, gate_configure) is bounded
// by the load timeout rather than the per-call one: a Go-built guest's
// start has passed a second on two busy cores under -race, and failed the
// built-in gates closed. Every evaluation keeps the per-call bound.
func (h *Host) LoadTrusted(ctx context.Context, wasm []byte, expectedSHA256 string) (*Module, error) {
	m, err := h.load(ctx, wasm, expectedSHA256, 0, true)
	if err == nil {
		m.trusted.Store(true) // these bytes are the program's own, however they were first loaded
	}
	return m, err
}

func (h *Host) load(ctx context.Context, wasm []byte, expectedSHA256 string, bound time.Duration, trusted bool) (*Module, error) {
	if h.closed.Load() {
		return nil, ErrClosed
	}
	if expectedSHA256 == "" {
		return nil, ErrDigestRequired
	}
	var digest string
	var verify func() error // nil: wasm was hashed here
	if claimed := strings.ToLower(strings.TrimPrefix(expectedSHA256, "sha256:")); trusted && governance.IsDigest(claimed) {
		digest = claimed
		verify = func() error {
			if actual := sha256Hex(wasm); actual != claimed {
				return &DigestMismatchError{Expected: expectedSHA256, Actual: actual}
			}
			return nil
		}
	} else {
		digest = sha256Hex(wasm)
		if expectedSHA256 != AnyDigest && claimed != digest {
			return nil, &DigestMismatchError{Expected: expectedSHA256, Actual: digest}
		}
	}
	for {
		h.mu.Lock()
		if h.closed.Load() {
			h.mu.Unlock()
			return nil, ErrClosed
		}
		if m, ok := h.modules[digest]; ok {
			h.mu.Unlock()
			return m, nil
		}
		if c, ok := h.loading[digest]; ok {
			// The same bytes are being loaded: wait for that one compile
			// instead of starting another (32 uploads of one module cost
			// one compile, not 32).
			h.mu.Unlock()
			select {
			case <-c.done:
			case <-ctx.Done():
				return nil, guestError(loadEnded(ctx), digest)
			}
			if c.callerLeft && ctx.Err() == nil {
				continue // that load's caller went away; this one has not
			}
			return c.m, c.err
		}
		c := &loadCall{done: make(chan struct{})}
		h.loading[digest] = c
		h.compiling.Add(1)
		h.mu.Unlock()
		return h.lead(ctx, c, wasm, digest, verify, bound, trusted)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// loadCall is a load of one digest in progress; m, err and callerLeft are
// set before done closes.
type loadCall struct {
	done chan struct{}
	m    *Module
	err  error
	// callerLeft: the load failed because its caller's context ended, so
	// a waiter whose own context lives loads again.
	callerLeft bool
}

// lead runs the load c that other loads of digest wait for.
func (h *Host) lead(ctx context.Context, c *loadCall, wasm []byte, digest string, verify func() error, bound time.Duration, trusted bool) (*Module, error) {
	defer h.compiling.Done()
	m, err := h.compileAdmitted(ctx, wasm, digest, verify, bound, trusted)
	if err != nil {
		err = guestError(err, digest)
	}
	h.mu.Lock()
	delete(h.loading, digest)
	if err == nil && h.closed.Load() {
		m.close(ctx)
		m, err = nil, ErrClosed
	}
	if err == nil {
		h.modules[digest] = m
	}
	c.m, c.err, c.callerLeft = m, err, err != nil && ctx.Err() != nil
	h.mu.Unlock()
	close(c.done)
	return m, err
}

// compile checks and instruments wasm (host/internal/interrupt), then
// compiles it: native modules on the fast runtime, Extism modules on the
// WithCloseOnContextDone runtime whose configuration Extism's own runtime
// shares (so Extism's compile is a cache hit). verify, when not nil, checks
// that wasm hashes to digest; it runs before the bytes are first read.
func (h *Host) compile(ctx context.Context, wasm []byte, digest string, verify func() error) (*Module, error) {
	h.compiles.Add(1)
	res, err := h.instr.instrument(wasm, digest, h.cfg.interruptOptions(), verify)
	if err != nil {
		var mismatch *DigestMismatchError
		if errors.As(err, &mismatch) {
			return nil, err
		}
		return nil, instrumentError(err)
	}
	// NB: the pass keeps the imports as they are; its output is read here,
	// so a cached entry spares reading the original bytes at all.
	extism, _ := interrupt.ImportsModule(res.Wasm, abi.ImportModuleExtism)
	if capBytes := uint64(h.cfg.memoryPages) * 65536; res.MemoryMinPages*65536+res.TableEntries*8 > capBytes {
		return nil, fault.New(fault.MemoryLimit, "load", "declared memory and tables exceed the memory cap")
	}
	if need := loadMemoryEstimate(len(wasm), res); need > h.cfg.loadMemory {
		return nil, fault.New(fault.LoadMemory, "load", fmt.Sprintf("compiling the module would need about %d MiB, over the load memory budget of %d MiB", need>>20, h.cfg.loadMemory>>20))
	}
	if ctx.Err() != nil {
		return nil, loadEnded(ctx)
	}
	rt := h.fast
	if extism {
		rt = h.extismRuntime()
	}
	cm, err := rt.CompileModule(ctx, res.Wasm)
	if err != nil {
		if ctx.Err() != nil {
			return nil, loadEnded(ctx) // wazero stopped compiling: the caller left or the bound passed
		}
		return nil, fault.New(fault.InvalidModule, "load", "not a valid Wasm module")
	}
	kind, err := h.checkImports(cm)
	if err != nil {
		_ = cm.Close(ctx)
		return nil, err
	}
	m := &Module{host: h, digest: digest, kind: kind, size: len(wasm), exports: exportNames(cm), compiledBytes: compiledBytesOf(res)}
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
			if ctx.Err() != nil {
				return nil, loadEnded(ctx)
			}
			return nil, err
		}
		m.extism, m.extismEx = c, ex
	}
	return m, nil
}

// extismRuntime returns rt, making it on first use. Only a compile calls
// it, counted in h.compiling, which Close waits for before it closes rt.
func (h *Host) extismRuntime() wazero.Runtime {
	h.rtOnce.Do(func() { h.rt = wazero.NewRuntimeWithConfig(context.Background(), h.rc) })
	return h.rt
}

// loadMemoryEstimate is what loading a module of size bytes costs at its
// peak, from what the instrumentation pass saw: the input and its rewrite
// side by side, wazero's own copy of the data segments, and the compiler's
// working memory and machine code, measured at up to 16 bytes per byte of
// code (a 3.9 MB Go-built module peaked at 59 MiB).
func loadMemoryEstimate(size int, res *interrupt.Result) int64 {
	return int64(size) + int64(len(res.Wasm)) + int64(res.DataBytes) + 16*int64(res.CodeBytes)
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
