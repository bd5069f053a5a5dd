package govhost

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy/policyfile"
)

// AdapterWasm is the gate adapter of the embedded default: the Wasm host,
// which runs native ABI v1 and Extism modules alike, with chain isolation
// (host.IsolationChain) for modules from outside the binary.
const AdapterWasm = policyfile.DefaultAdapter

// AdapterWasmPerCall is the same adapter with a reset before every call
// (host.IsolationCall): a binding that names it gets a gate that sees
// nothing of any earlier call, even of its own task chain. The adapter id is
// part of the policy digest, so a policy version pins its isolation.
const AdapterWasmPerCall = "wasm-call"

// ErrModuleUnknown reports a module digest that is neither built in nor in
// the module folder.
var ErrModuleUnknown = errors.New("govhost: gate module not available")

// Gates resolves policy bindings to running gates: a module by its sha256
// (a built-in, or a file in the content-addressed module folder) configured
// with the binding's canonical config. It implements controller.GateProvider
// and policy.Availability. Safe for concurrent use.
type Gates struct {
	host *host.Host
	dir  string // <dir>/<sha256>.wasm; "" keeps user modules in memory only

	mu      sync.Mutex
	loaded  map[string]*loadedModule // compiled modules held (modulecache.go)
	loading map[string]*moduleLoad   // loads in progress, by digest
	pending map[string][]byte        // added in memory, without a folder
	metas   map[string][]byte        // moduleMeta records, without a folder
	// idle lists the digests of loaded modules no gate pins, most recently
	// used first; idleBytes is their CompiledBytes, kept within idleBudget.
	idle       *list.List
	idleBytes  int64
	idleBudget int64
	gates      sync.Map // gateKey → *declaredGate: a binding's gate, resolved once
	// declared holds every reason code a gate resolved so far declares
	// (exact codes, and namespaces ending in "."), for the metrics' labels.
	declared sync.Map
	// madeBuiltins holds the digest of every built-in module a gate was
	// made from (the next run's warm list: prefetch.go).
	madeBuiltins sync.Map
}

// gateKey names a binding's gate: its gate id (two bindings never share
// instances), adapter (isolation), module and canonical config.
type gateKey struct{ gateID, adapter, digest, config string }

var (
	_ controller.GateProvider = (*Gates)(nil)
	_ controller.ChainGate    = (*declaredGate)(nil)
)

// NewGates returns a resolver over h with the built-in modules and the
// module folder dir (created if missing; "" for none).
func NewGates(h *host.Host, dir string) (*Gates, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("govhost: module folder: %w", err)
		}
	}
	return &Gates{host: h, dir: dir, loaded: map[string]*loadedModule{}, loading: map[string]*moduleLoad{},
		pending: map[string][]byte{}, metas: map[string][]byte{}, idle: list.New(), idleBudget: IdleModuleBytes}, nil
}

// Add makes a module available by its digest, storing it in the module
// folder, and returns the digest. It does not load the module: Upload is
// the checked way in for bytes from outside.
func (g *Gates) Add(wasm []byte) (string, error) {
	digest := governance.SHA256Hex(wasm)
	_, err := g.store(digest, wasm)
	return digest, err
}

// store keeps wasm under its digest: <dir>/<digest>.wasm, written to a
// temporary file, synced and linked into place (so a reader never sees a
// partial module and two writers of the same bytes agree on who created
// it), or in memory without a folder. created is false for bytes already
// stored and for the built-in modules, which are never stored.
func (g *Gates) store(digest string, wasm []byte) (created bool, err error) {
	if _, ok := builtin.ByDigest(digest); ok {
		return false, nil
	}
	if g.dir == "" {
		g.mu.Lock()
		defer g.mu.Unlock()
		if _, ok := g.pending[digest]; ok {
			return false, nil
		}
		g.pending[digest] = append([]byte(nil), wasm...)
		return true, nil
	}
	path := filepath.Join(g.dir, digest+".wasm")
	if _, err := os.Stat(path); err == nil {
		return false, nil
	}
	tmp, err := os.CreateTemp(g.dir, ".module-*")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(wasm)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return false, err
	}
	switch err := os.Link(tmp.Name(), path); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil // another writer stored the same bytes first
	}
	// A file system without hard links: rename (atomic, but it cannot say
	// who came first).
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, err
	}
	return true, nil
}

// Resolver returns the policy file resolver that maps built-in names to
// their digests and copies .wasm files (relative to baseDir) into the
// module folder as it resolves them: for a dry run (govhost eval) and
// tests. Storing a policy file is PutPolicyFile, which stores nothing
// when the file is refused.
func (g *Gates) Resolver(baseDir string) policyfile.Resolver {
	return func(ref string) (string, error) {
		if !policyfile.IsPath(ref) {
			m, ok := builtin.Lookup(ref)
			if !ok {
				return "", fmt.Errorf("%w: no built-in gate %q (have %v)", policyfile.ErrModuleNotFound, ref, builtin.Names())
			}
			return m.Digest, nil
		}
		wasm, err := policyfile.ReadModule(baseDir, ref)
		if err != nil {
			return "", err
		}
		return g.Add(wasm)
	}
}

// module returns the compiled module for digest, loading it on first use
// (and again after it was released), and records it as the most recently
// used; pin also pins it for a gate (keep), which the caller undoes with
// unpin when no gate is made. Different modules load concurrently
// (activation asks for all of a policy's at once); callers asking for a
// module being loaded wait for that load.
func (g *Gates) module(ctx context.Context, digest string, pin bool) (*host.Module, error) {
	for {
		g.mu.Lock()
		if e, ok := g.loaded[digest]; ok {
			m := g.keep(digest, e.m, pin)
			g.mu.Unlock()
			return m, nil
		}
		if l, ok := g.loading[digest]; ok {
			g.mu.Unlock()
			select {
			case <-l.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if l.err == nil || ctx.Err() == nil && (errors.Is(l.err, context.Canceled) || errors.Is(l.err, context.DeadlineExceeded)) {
				continue // loaded (take it from loaded), or the loader's context ended, not ours
			}
			return nil, l.err
		}
		wasm, err := g.bytes(digest)
		if err != nil {
			g.mu.Unlock()
			return nil, err
		}
		l := &moduleLoad{done: make(chan struct{})}
		g.loading[digest] = l
		g.mu.Unlock()

		m, err := g.loader(digest)(ctx, wasm, digest)
		g.mu.Lock()
		delete(g.loading, digest)
		if err == nil {
			m = g.keep(digest, m, pin)
		}
		l.err = err
		g.mu.Unlock()
		close(l.done)
		if m != nil || err != nil {
			g.recordCheck(digest, m, refusal(err, digest))
		}
		if err == nil && m == nil {
			continue // released by a failed upload of the same bytes meanwhile
		}
		return m, err
	}
}

// loader is how the module with digest is loaded: with every limit for
// untrusted modules (host.Load), except the built-ins embedded in the
// binary, which are not bounded by the load timeout (a Go-built module
// compiles slowly on a loaded machine, and is not hostile).
func (g *Gates) loader(digest string) func(context.Context, []byte, string) (*host.Module, error) {
	if _, ok := builtin.ByDigest(digest); ok {
		return g.host.LoadTrusted
	}
	return g.host.Load
}

// moduleLoad is a load in progress; err is set before done closes.
type moduleLoad struct {
	done chan struct{}
	err  error
}

// bytes must be called with g.mu held.
func (g *Gates) bytes(digest string) ([]byte, error) {
	if !governance.IsDigest(digest) {
		return nil, fmt.Errorf("%w: %q is not a sha256", ErrModuleUnknown, digest)
	}
	if m, ok := builtin.ByDigest(digest); ok {
		return m.Wasm, nil
	}
	if b, ok := g.pending[digest]; ok {
		return b, nil
	}
	if g.dir != "" {
		b, err := os.ReadFile(filepath.Join(g.dir, digest+".wasm"))
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrModuleUnknown, digest)
}

// GateFor implements controller.GateProvider.
func (g *Gates) GateFor(ctx context.Context, b governance.ExecutableGateBinding) (controller.Gate, error) {
	if !g.AdapterAvailable(b.AdapterID()) {
		return nil, fmt.Errorf("govhost: gate %s: unknown adapter %q", b.GateID(), b.AdapterID())
	}
	key := gateKey{b.GateID(), b.AdapterID(), b.ModuleDigest(), b.Config()}
	if gate, ok := g.gates.Load(key); ok {
		return gate.(*declaredGate), nil
	}
	m, err := g.module(ctx, b.ModuleDigest(), true)
	if err != nil {
		return nil, err
	}
	made := false
	defer func() {
		if !made {
			g.unpin(b.ModuleDigest())
		}
	}()
	config := []byte(b.Config())
	bm, isBuiltin := builtin.ByDigest(b.ModuleDigest())
	if isBuiltin && builtinConfigHooks[bm.Name] != nil {
		// The host's part of a built-in's configuration (builtinconfig.go):
		// pathguard's roots resolved, as the originals realpath them when
		// the policy is built; once per configured gate.
		if config, err = builtinConfigHooks[bm.Name](config); err != nil {
			return nil, fmt.Errorf("govhost: gate %s: %w", b.GateID(), err)
		}
	}
	// NB: the binding name is the gate id, unique within a snapshot: two
	// bindings of one policy never share instances. Bindings of different
	// policies with the same gate id, adapter, module and configuration share
	// a pool; chain isolation keeps their task chains apart.
	gate, err := g.host.GateWith(ctx, m, config, host.GateOptions{Isolation: isolation(b), Binding: b.GateID()})
	if err != nil {
		return nil, err
	}
	made = true
	if isBuiltin {
		g.madeBuiltins.Store(bm.Digest, true)
	}
	dg := &declaredGate{Gate: gate, vocab: g.vocabularyOf(ctx, gate)}
	g.gates.Store(key, dg)
	return dg, nil
}

// builtinsMade lists, sorted, the built-in modules gates were made from.
func (g *Gates) builtinsMade() []string {
	var made []string
	g.madeBuiltins.Range(func(k, _ any) bool {
		made = append(made, k.(string))
		return true
	})
	slices.Sort(made)
	return made
}

// Prepare resolves the gate of every binding (GateFor) at once, so that a
// policy's first governed call finds them loaded and configured: the
// modules load side by side (as many at a time as the host has compile
// slots; bindings of one module share its one load) and each gate is
// configured as soon as its module is there. It returns after every
// binding is resolved or has failed; the error is the first failure in
// binding order, "gate <gate id>: <the GateFor error>" (which errors.As
// sees through: a module the host refuses stays a *host.GuestError).
func (g *Gates) Prepare(ctx context.Context, bindings []governance.ExecutableGateBinding) error {
	errs := make([]error, len(bindings))
	var wg sync.WaitGroup
	for i, b := range bindings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := g.GateFor(ctx, b); err != nil {
				errs[i] = fmt.Errorf("gate %s: %w", b.GateID(), err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// AdapterAvailable implements policy.Availability.
func (g *Gates) AdapterAvailable(id string) bool {
	return id == AdapterWasm || id == AdapterWasmPerCall
}

// isolation is the host isolation of binding b: per call when its adapter
// says so; otherwise chain isolation, except for the built-in gates embedded
// in the binary, which are shared (host.IsolationShared: NOT isolated; they
// are pure functions of their input and configuration, and resetting a
// Go-built instance costs about a millisecond).
func isolation(b governance.ExecutableGateBinding) host.Isolation {
	if b.AdapterID() == AdapterWasmPerCall {
		return host.IsolationCall
	}
	if _, ok := builtin.ByDigest(b.ModuleDigest()); ok {
		return host.IsolationShared
	}
	return host.IsolationChain
}

// ModuleAvailable implements policy.Availability: the module's bytes are
// here and the host loads them.
func (g *Gates) ModuleAvailable(digest string) bool {
	_, err := g.module(context.Background(), digest, false)
	return err == nil
}

// GatePool is the instance pool of one gate id (summed over the policy
// versions and configurations that bind that id).
type GatePool struct {
	GateID string
	host.PoolStats
}

// Pools returns the instance pools of every gate resolved so far, by gate
// id (for metrics).
func (g *Gates) Pools() []GatePool {
	byID := map[string]*GatePool{}
	seen := map[*host.Gate]bool{} // NB: two keys may share the host's gate
	g.gates.Range(func(k, v any) bool {
		gate := v.(*declaredGate).Gate
		if seen[gate] {
			return true
		}
		seen[gate] = true
		id := k.(gateKey).gateID
		p := byID[id]
		if p == nil {
			p = &GatePool{GateID: id}
			byID[id] = p
		}
		st := gate.PoolStats()
		p.Live += st.Live
		p.Idle += st.Idle
		p.Size += st.Size
		return true
	})
	out := make([]GatePool, 0, len(byID))
	for _, p := range byID {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GateID < out[j].GateID })
	return out
}
