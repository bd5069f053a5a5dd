package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/fault"
	"github.com/govhost/govhost/host/internal/native"
	"github.com/govhost/govhost/host/internal/pool"
	"github.com/govhost/govhost/host/internal/wire"
)

// instance is one configured guest instance of either kind.
type instance interface {
	Evaluate(ctx context.Context, input []byte) (abi.GateOutput, error)
	Describe(ctx context.Context) ([]byte, error)
	// Reset restores the state right after setup; false: replace it.
	Reset() bool
	Dead() bool
	MemoryBytes() uint64
	Close(ctx context.Context)
}

type gateKey struct {
	module, config, binding string
	isolation               Isolation
}

type gateEntry struct {
	once sync.Once
	gate *Gate
	err  error
}

// Gate is a module bound to one configuration, with a bounded pool of
// configured instances. It is safe for concurrent use and lives as long as
// its Host.
type Gate struct {
	host         *Host
	module       *Module
	configDigest string
	isolation    Isolation
	pool         *pool.Pool[*pooled]
}

// Gate returns GateWith(ctx, m, configJSON, GateOptions{}): chain isolation,
// no binding name.
func (h *Host) Gate(ctx context.Context, m *Module, configJSON []byte) (*Gate, error) {
	return h.GateWith(ctx, m, configJSON, GateOptions{})
}

// GateWith returns the gate of module m with configJSON (nil, empty or null
// means none: gate_configure receives {}). The same (module digest,
// configuration, isolation, binding) returns the same *Gate, sharing one pool. One instance is created and
// configured before Gate returns, so a refused configuration (a
// *GuestError with CodeConfigRejected) or a module that cannot start is
// reported here. Invalid JSON is ErrBadGateConfig.
//
// The configuration is identified by the sha256 of its compact JSON;
// callers that want equal configurations to share a pool pass canonical
// JSON.
func (h *Host) GateWith(ctx context.Context, m *Module, configJSON []byte, opts GateOptions) (*Gate, error) {
	// NB: creating the first instance runs guest code (start, _initialize,
	// gate_configure): counted in flight like a call, so Close waits for it.
	h.inflight.Add(1)
	defer h.inflight.Add(-1)
	if h.closed.Load() {
		return nil, ErrClosed
	}
	if m == nil || m.host != h {
		return nil, ErrForeignModule
	}
	config, err := normalizeConfig(configJSON)
	if err != nil {
		return nil, err
	}
	if !m.Configurable() && !bytes.Equal(config, []byte("{}")) {
		return nil, &GuestError{Code: CodeMissingExport, Op: "configure", Digest: m.digest,
			reason: "a configuration was given but the module exports no gate_configure"}
	}
	sum := sha256.Sum256(config)
	if opts.Isolation < IsolationChain || opts.Isolation > IsolationShared {
		return nil, fmt.Errorf("%w: unknown isolation %v", ErrInvalidConfig, opts.Isolation)
	}
	key := gateKey{module: m.digest, config: hex.EncodeToString(sum[:]), binding: opts.Binding, isolation: opts.Isolation}

	h.mu.Lock()
	if m.released {
		h.mu.Unlock()
		return nil, ErrModuleReleased
	}
	e, ok := h.gates[key]
	if !ok {
		e = &gateEntry{}
		h.gates[key] = e
	}
	h.mu.Unlock()

	e.once.Do(func() { e.gate, e.err = h.newGate(ctx, m, key.config, config, opts.Isolation) })
	if e.err != nil {
		h.mu.Lock()
		if h.gates[key] == e { // let a later call try again
			delete(h.gates, key)
		}
		h.mu.Unlock()
		return nil, e.err
	}
	return e.gate, nil
}

func (h *Host) newGate(ctx context.Context, m *Module, configDigest string, config []byte, isolation Isolation) (*Gate, error) {
	g := &Gate{host: h, module: m, configDigest: configDigest, isolation: isolation}
	state := m.nativeState
	if isolation == IsolationShared {
		// A shared instance is never reset (needsReset): a snapshot of its
		// memory would be a second copy of it kept for nothing (~3.5 MiB for
		// a Go-built guest).
		state.Resettable = false
	}
	create := func(ctx context.Context) (*pooled, error) {
		var inst instance
		var err error
		switch m.kind {
		case KindExtism:
			inst, err = m.extism.Instantiate(ctx, config)
		default:
			inst, err = native.Instantiate(ctx, m.runtime, m.compiled, m.nativeEx, state, h.nativeParams(m), config)
		}
		if err != nil {
			return nil, err
		}
		return &pooled{instance: inst}, nil
	}
	g.pool = pool.New(h.cfg.poolSize, create, func(p *pooled) { p.Close(context.Background()) })
	inst, err := g.pool.Get(ctx)
	if err != nil {
		g.pool.Close()
		return nil, g.failure(err)
	}
	g.pool.Put(inst)
	return g, nil
}

// normalizeConfig returns the compact configuration; none (empty or null)
// is {}.
func normalizeConfig(raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return []byte("{}"), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, ErrBadGateConfig
	}
	return b.Bytes(), nil
}

// Isolation returns the gate's isolation mode.
func (g *Gate) Isolation() Isolation { return g.isolation }

// acquire returns an instance fit to serve a call of chain under the gate's
// isolation: reset, or replaced when it cannot be reset.
func (g *Gate) acquire(ctx context.Context, chain string) (*pooled, error) {
	for {
		p, err := g.pool.Get(ctx)
		if err != nil {
			return nil, err
		}
		if !g.isolation.needsReset(p, chain) {
			return p, nil
		}
		if q := g.affine(ctx, p, chain); q != nil {
			return q, nil
		}
		if p.Reset() {
			p.dirty, p.chain = false, ""
			return p, nil
		}
		g.pool.Discard(p) // the next Get creates a fresh one in its slot
	}
}

// affine looks, under chain isolation, for an instance that can serve a
// call of chain without a reset, when p (just taken from the pool) would
// need one: another idle instance this chain dirtied last or that is clean,
// else a new instance while the pool has room (a reset costs a Go-built
// guest 0.5-1.5 ms on every switch of chains; an instance costs 1.5-5 ms
// once). p goes back to the pool when another is returned; nil means reset
// p. Isolation is unchanged: an instance still serves one chain between
// resets.
func (g *Gate) affine(ctx context.Context, p *pooled, chain string) *pooled {
	if g.isolation != IsolationChain || chain == "" {
		return nil
	}
	var held []*pooled
	defer func() {
		for _, h := range held {
			g.pool.Put(h)
		}
	}()
	// NB: at most one pass over what is idle now; instances taken here are
	// held (not running guest code) only while the pass lasts.
	for range g.host.cfg.poolSize {
		q, ok := g.pool.TryGet()
		if !ok {
			break
		}
		if !g.isolation.needsReset(q, chain) {
			held = append(held, p)
			return q
		}
		held = append(held, q)
	}
	q, ok, err := g.pool.TryCreate(ctx)
	if err != nil || !ok {
		return nil // reset p, as without affinity
	}
	held = append(held, p)
	return q
}

// release returns p to the pool after it served a call of chain.
func (g *Gate) release(p *pooled, chain string) {
	if p.Dead() {
		g.pool.Discard(p)
		return
	}
	p.dirty, p.chain = true, chain
	g.pool.Put(p)
}

// Module returns the gate's module.
func (g *Gate) Module() *Module { return g.module }

// ConfigDigest returns the hex sha256 of the gate's compact configuration.
func (g *Gate) ConfigDigest() string { return g.configDigest }

// Evaluate runs the gate on in, as a call outside any task chain: under
// IsolationChain the instance is reset first if it served anything. See
// EvaluateChain.
func (g *Gate) Evaluate(ctx context.Context, in abi.GateInput) (abi.GateOutput, error) {
	return g.EvaluateChain(ctx, "", in)
}

// EvaluateChain runs the gate on in for a call of task chain chain (the
// controller passes the operation's chain id; "" is no chain). The host sets in.ABIVersion to the version
// it speaks. On success err is nil. On any guest failure it returns a deny
// with a stable reason code (and no guest text) and a *GuestError; the
// failed instance is discarded. A host-side problem (ErrClosed) returns a
// deny with CodeHostError and that error. ctx's deadline and cancellation
// stop a running guest.
func (g *Gate) EvaluateChain(ctx context.Context, chain string, in abi.GateInput) (abi.GateOutput, error) {
	// NB: count first, then check closed: Close sets closed, then waits for
	// the count to drop, so no call starts on a closing host unseen.
	g.host.inflight.Add(1)
	defer g.host.inflight.Add(-1)
	if g.host.closed.Load() {
		return deny(CodeHostError), ErrClosed
	}
	in.ABIVersion = abi.Version
	enc := wire.GetEncoder()
	defer wire.PutEncoder(enc)
	input, err := enc.Encode(&in)
	if err != nil {
		return deny(CodeHostError), err
	}
	inst, err := g.acquire(ctx, chain)
	if err != nil {
		err = g.failure(err)
		return DenyFor(err), err
	}
	out, err := inst.Evaluate(ctx, input)
	g.release(inst, chain)
	if err != nil {
		err = g.failure(err)
		return DenyFor(err), err
	}
	return out, nil
}

// Describe returns the module's self-description (gate_describe), and false
// when it does not export one. It is informational only.
func (g *Gate) Describe(ctx context.Context) (abi.Description, bool, error) {
	var d abi.Description
	g.host.inflight.Add(1)
	defer g.host.inflight.Add(-1)
	if g.host.closed.Load() {
		return d, false, ErrClosed
	}
	inst, err := g.acquire(ctx, "")
	if err != nil {
		return d, false, g.failure(err)
	}
	raw, err := inst.Describe(ctx)
	g.release(inst, "")
	if err != nil {
		return d, false, g.failure(err)
	}
	if raw == nil {
		return d, false, nil
	}
	if json.Unmarshal(raw, &d) != nil {
		return d, false, &GuestError{Code: CodeBadOutput, Op: "describe", Digest: g.module.digest, reason: "description is not JSON"}
	}
	return d, true, nil
}

// MemoryBytes returns the size of the linear memory of one of the gate's
// instances, taken idle from its pool: what one instance costs at rest after
// the calls it has served (for an Extism module, the gate module's memory,
// not the Extism kernel's). It is a figure for tooling (govhost bench).
func (g *Gate) MemoryBytes(ctx context.Context) (uint64, error) {
	g.host.inflight.Add(1)
	defer g.host.inflight.Add(-1)
	if g.host.closed.Load() {
		return 0, ErrClosed
	}
	inst, err := g.pool.Get(ctx)
	if err != nil {
		return 0, g.failure(err)
	}
	n := inst.MemoryBytes()
	g.pool.Put(inst)
	return n, nil
}

// PoolStats is a snapshot of a gate's instance pool.
type PoolStats struct {
	// Live instances exist now: idle, serving a call, or being created.
	Live int
	// Idle instances wait in the pool.
	Idle int
	// Size bounds Live (WithPoolSize).
	Size int
}

// PoolStats returns a snapshot of the gate's instance pool (for metrics).
func (g *Gate) PoolStats() PoolStats {
	live, idle, size := g.pool.Stats()
	return PoolStats{Live: live, Idle: idle, Size: size}
}

// failure turns an internal error into what Evaluate returns.
func (g *Gate) failure(err error) error {
	if g.host.closed.Load() {
		return ErrClosed
	}
	if _, ok := fault.As(err); ok {
		return guestError(err, g.module.digest)
	}
	switch {
	case errors.Is(err, pool.ErrClosed):
		return ErrClosed
	case errors.Is(err, context.DeadlineExceeded): // waited for an instance past the deadline
		return &GuestError{Code: CodeTimeout, Op: "wait", Digest: g.module.digest, cause: context.DeadlineExceeded}
	case errors.Is(err, context.Canceled):
		return &GuestError{Code: CodeCanceled, Op: "wait", Digest: g.module.digest, cause: context.Canceled}
	}
	return err
}
