package govhost

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// IdleModuleBytes bounds the compiled modules a Gates keeps that no gate
// uses (host.Module.CompiledBytes, estimated): modules uploaded, listed or
// checked for a policy but not bound by a binding resolved since the start.
// Past it the least recently used are released (host.Host.Release) and
// compiled again, from the compilation cache, when next needed. A module a
// resolved binding's gate runs stays compiled as long as the engine: the
// gates do. The most recently used module is kept even when it alone is
// larger.
const IdleModuleBytes = 64 << 20

// loadedModule is a compiled module the Gates holds.
type loadedModule struct {
	m *host.Module
	// pins counts the gates made, or being made, from it; while it is
	// above zero the module is not in the idle list and is never released.
	pins int
	idle *list.Element // in Gates.idle while pins == 0
}

// keep records m, compiled for digest, as the most recently used module
// (pinned once more when pin) and releases the least recently used idle
// ones past the budget, and returns the module held for digest: m, or the
// one already held (m may be a module the host has released since it was
// loaded; it is never recorded). Call with g.mu held: releasing under it
// means a module in g.loaded is never a released one.
func (g *Gates) keep(digest string, m *host.Module, pin bool) *host.Module {
	e, ok := g.loaded[digest]
	if !ok {
		if m.Released() {
			return nil
		}
		e = &loadedModule{m: m}
		g.loaded[digest] = e
	}
	switch {
	case pin:
		if e.idle != nil {
			g.idle.Remove(e.idle)
			e.idle = nil
			g.idleBytes -= e.m.CompiledBytes()
		}
		e.pins++
		return e.m
	case e.pins > 0:
		return e.m
	case e.idle != nil:
		g.idle.MoveToFront(e.idle)
	default:
		e.idle = g.idle.PushFront(digest)
		g.idleBytes += e.m.CompiledBytes()
	}
	for g.idleBytes > g.idleBudget && g.idle.Len() > 1 {
		last := g.idle.Back()
		d := last.Value.(string)
		old := g.loaded[d]
		g.idle.Remove(last)
		g.idleBytes -= old.m.CompiledBytes()
		delete(g.loaded, d)
		// NB: a module the host still has a gate for (made other than
		// through the Gates) stays with the host; forgetting it here
		// costs a lookup.
		g.host.Release(context.Background(), old.m)
	}
	return e.m
}

// unpin undoes keep's pin when no gate was made after all.
func (g *Gates) unpin(digest string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.loaded[digest]; ok && e.pins > 0 {
		e.pins--
		if e.pins == 0 {
			g.keep(digest, e.m, false)
		}
	}
}

// CompiledBytes is the estimated memory of the compiled modules the Gates
// holds: idle (within IdleModuleBytes) and pinned by gates.
func (g *Gates) CompiledBytes() (idle, pinned int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.loaded {
		if e.pins > 0 {
			pinned += e.m.CompiledBytes()
		}
	}
	return g.idleBytes, pinned
}

// moduleMeta is what a check of a stored module found, kept beside it
// (<digest>.meta) so that describing or listing stored modules reads it
// instead of compiling each: a start costs nothing per stored module. It
// holds under the host's CheckKey only; another key (other limits, another
// build of the instrumentation) checks the module again.
type moduleMeta struct {
	Check   string       `json:"check"`
	Kind    host.Kind    `json:"kind,omitempty"`
	Exports []string     `json:"exports,omitempty"`
	Size    int          `json:"size"`
	Refused *metaRefusal `json:"refused,omitempty"`
}

type metaRefusal struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// transientRefusals are refusals that say nothing about the module's bytes
// (time, a caller gone, a busy host): never recorded.
var transientRefusals = map[string]bool{host.CodeLoadTimeout: true, host.CodeCanceled: true}

// recordCheck keeps what loading digest found: the module's description,
// or the host's refusal. Best effort: a record that cannot be written
// costs a check the next time.
func (g *Gates) recordCheck(digest string, m *host.Module, err error) {
	if _, ok := builtin.ByDigest(digest); ok {
		return // the binary's own: never stored
	}
	meta := moduleMeta{Check: g.host.CheckKey()}
	var refused *ModuleRefusedError
	switch {
	case err == nil:
		meta.Kind, meta.Exports, meta.Size = m.Kind(), m.Exports(), m.Size()
	case errors.As(err, &refused) && !transientRefusals[refused.Code]:
		meta.Refused = &metaRefusal{Code: refused.Code, Message: refused.Error()}
	default:
		return
	}
	b, jerr := json.Marshal(meta)
	if jerr != nil {
		return
	}
	if g.dir == "" {
		g.mu.Lock()
		g.metas[digest] = b
		g.mu.Unlock()
		return
	}
	tmp, terr := os.CreateTemp(g.dir, ".meta-*")
	if terr != nil {
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), g.metaPath(digest)) != nil {
		_ = os.Remove(tmp.Name())
	}
}

func (g *Gates) metaPath(digest string) string { return filepath.Join(g.dir, digest+".meta") }

// checked returns the recorded check of the stored module digest under the
// host's current CheckKey: its description, or its refusal (a
// *ModuleRefusedError). ok is false when there is none to trust.
func (g *Gates) checked(digest string) (info ModuleInfo, refused error, ok bool) {
	var b []byte
	if g.dir == "" {
		g.mu.Lock()
		b = g.metas[digest]
		g.mu.Unlock()
	} else {
		var err error
		if b, err = os.ReadFile(g.metaPath(digest)); err != nil {
			return ModuleInfo{}, nil, false
		}
	}
	var meta moduleMeta
	if json.Unmarshal(b, &meta) != nil || meta.Check != g.host.CheckKey() {
		return ModuleInfo{}, nil, false
	}
	if meta.Refused != nil {
		return ModuleInfo{}, &ModuleRefusedError{Code: meta.Refused.Code, Digest: digest, Err: errors.New(meta.Refused.Message)}, true
	}
	if meta.Kind != host.KindNative && meta.Kind != host.KindExtism {
		return ModuleInfo{}, nil, false
	}
	return ModuleInfo{Digest: digest, Kind: meta.Kind, Exports: meta.Exports, Size: meta.Size}, nil, true
}

// described describes the stored module digest without loading it: held
// compiled, or from the record of its check. ok is false for a built-in
// module, a digest not stored, or one without a record to trust.
func (g *Gates) described(digest string) (info ModuleInfo, refused error, ok bool) {
	if _, builtIn := builtin.ByDigest(digest); builtIn || !governance.IsDigest(digest) {
		return ModuleInfo{}, nil, false
	}
	g.mu.Lock()
	e, held := g.loaded[digest]
	_, pending := g.pending[digest]
	g.mu.Unlock()
	if held {
		return infoOf(e.m), nil, true
	}
	if !pending {
		if g.dir == "" {
			return ModuleInfo{}, nil, false
		}
		if _, err := os.Stat(filepath.Join(g.dir, digest+".wasm")); err != nil {
			return ModuleInfo{}, nil, false
		}
	}
	return g.checked(digest)
}
