package govhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// ModuleInfo describes a gate module the engine can run.
type ModuleInfo struct {
	// Digest is the lowercase hex sha256 of the module's bytes: the name a
	// policy binds it by.
	Digest string
	// Kind is its guest ABI: host.KindNative or host.KindExtism.
	Kind host.Kind
	// Exports are its exported functions and memories, sorted (guest
	// text: escape it before printing it for people, abi.DisplayText).
	Exports []string
	Size    int
	// Builtin is the built-in gate's name when the module is embedded in
	// the binary.
	Builtin string
}

// ErrModuleEmpty refuses an upload without bytes.
var ErrModuleEmpty = errors.New("govhost: the module is empty (send the .wasm file's bytes)")

// Quotas of the module folder: uploads past either are refused with a
// *ModuleQuotaError before anything is compiled or stored. The built-in
// gates do not count; a policy file's own .wasm paths (Resolver, the
// operator's files on this machine) are not held to them.
const (
	MaxStoredModules     = 64
	MaxStoredModuleBytes = 512 << 20
)

// ModuleQuotaError refuses an upload that would pass the module folder's
// quota (MaxStoredModules, MaxStoredModuleBytes).
type ModuleQuotaError struct {
	Stored, StoredBytes int64
	Size                int
}

func (e *ModuleQuotaError) Error() string {
	return fmt.Sprintf("govhost: the module folder holds %d modules (%d MiB); storing %d bytes more would pass its quota of %d modules or %d MiB",
		e.Stored, e.StoredBytes>>20, e.Size, MaxStoredModules, MaxStoredModuleBytes>>20)
}

// checkQuota refuses storing a module of size bytes with digest when the
// folder is full; bytes already stored (or built in) always pass.
func (g *Gates) checkQuota(digest string, size int) error {
	if _, ok := builtin.ByDigest(digest); ok {
		return nil
	}
	var n, total int64
	if g.dir == "" {
		g.mu.Lock()
		_, have := g.pending[digest]
		for _, b := range g.pending {
			n, total = n+1, total+int64(len(b))
		}
		g.mu.Unlock()
		if have {
			return nil
		}
	} else {
		entries, err := os.ReadDir(g.dir)
		if err != nil {
			return fmt.Errorf("govhost: module folder: %w", err)
		}
		for _, e := range entries {
			d, ok := strings.CutSuffix(e.Name(), ".wasm")
			if !ok || !governance.IsDigest(d) {
				continue
			}
			if d == digest {
				return nil
			}
			if info, err := e.Info(); err == nil {
				n, total = n+1, total+info.Size()
			}
		}
	}
	if n+1 > MaxStoredModules || total+int64(size) > MaxStoredModuleBytes {
		return &ModuleQuotaError{Stored: n, StoredBytes: total, Size: size}
	}
	return nil
}

// ErrLoadBusy refuses a load when the host's compile slots and their queue
// are full (host.ErrLoadBusy): nothing is wrong with the module; retry later.
var ErrLoadBusy = host.ErrLoadBusy

// ModuleRefusedError is a module the host refuses as a gate. Code is the
// host's stable reason code (host.CodeInvalidModule, host.CodeBadImport,
// host.CodeReservedName, host.CodeTooManyFunctions, ...); the message is
// the host's, never text taken from the module.
type ModuleRefusedError struct {
	Code   string
	Digest string
	Err    error
}

func (e *ModuleRefusedError) Error() string { return e.Err.Error() }
func (e *ModuleRefusedError) Unwrap() error { return e.Err }

// ModuleRefusalCodes are the codes a ModuleRefusedError may carry: every
// reason host.Load refuses a module for.
var ModuleRefusalCodes = []string{
	host.CodeInvalidModule, host.CodeBadImport, host.CodeReservedName, host.CodeMissingExport,
	host.CodeABIVersion, host.CodeMemoryLimit, host.CodeLoadTimeout, host.CodeCanceled, host.CodeLoadMemory,
	host.CodeTooManyFunctions, host.CodeTooManyLocals, host.CodeNestingTooDeep,
	host.CodeBranchTableTooLarge, host.CodeFunctionTooLarge,
}

// Upload checks that wasm is a gate and stores it in the module folder by
// its sha256, so that a policy can bind it by digest. The check is a full
// host.Load with every limit for modules from outside (structural limits,
// imports, instrumentation, the load timeout): a module the host refuses
// is a *ModuleRefusedError and nothing is stored. created is false when
// the same bytes were already stored (or are a built-in gate): uploading
// twice is not an error.
func (g *Gates) Upload(ctx context.Context, wasm []byte) (info ModuleInfo, created bool, err error) {
	if len(wasm) == 0 {
		return ModuleInfo{}, false, ErrModuleEmpty
	}
	digest := governance.SHA256Hex(wasm)
	if err := g.checkQuota(digest, len(wasm)); err != nil {
		return ModuleInfo{}, false, err
	}
	m, err := g.loader(digest)(ctx, wasm, digest)
	if err != nil {
		return ModuleInfo{}, false, refusal(err, digest)
	}
	if created, err = g.store(digest, wasm); err != nil {
		// NB: not stored, so not held either (unless a policy's load of
		// the same bytes holds it).
		g.mu.Lock()
		if _, held := g.loaded[digest]; !held {
			g.host.Release(ctx, m)
		}
		g.mu.Unlock()
		return ModuleInfo{}, false, fmt.Errorf("govhost: storing module %s: %w", digest, err)
	}
	g.recordCheck(digest, m, nil)
	// NB: only once stored: a module in loaded is one policies may use.
	g.mu.Lock()
	g.keep(digest, m, false)
	g.mu.Unlock()
	return infoOf(m), created, nil
}

// Module describes the module with digest: stored or built in. A stored
// module is described from the record of its last check (moduleMeta) when
// there is one under the host's CheckKey, else loaded (and checked, and the
// check recorded). An unknown digest is ErrModuleUnknown; a stored module
// the host refuses is a *ModuleRefusedError.
func (g *Gates) Module(ctx context.Context, digest string) (ModuleInfo, error) {
	if info, refused, ok := g.described(digest); ok {
		return info, refused
	}
	m, err := g.module(ctx, digest, false)
	if err != nil {
		if errors.Is(err, ErrModuleUnknown) {
			return ModuleInfo{}, err
		}
		return ModuleInfo{}, refusal(err, digest)
	}
	return infoOf(m), nil
}

// StoredModule is one entry of Stored: the module, or why the host
// refuses it now (a module stored before the limits were tightened).
type StoredModule struct {
	ModuleInfo
	Refused *ModuleRefusedError
}

// Stored lists the modules in the module folder (and those added in
// memory), by digest; the built-in gates are not listed (a policy names
// them). Each is described as Module does: from the record of its check,
// so a listing compiles only modules never checked under the host's
// CheckKey (put in the folder by hand or by a policy file, or checked by
// another build), once.
func (g *Gates) Stored(ctx context.Context) ([]StoredModule, error) {
	digests, err := g.storedDigests()
	if err != nil {
		return nil, err
	}
	out := make([]StoredModule, 0, len(digests))
	for _, d := range digests {
		info, err := g.Module(ctx, d)
		var refused *ModuleRefusedError
		switch {
		case errors.As(err, &refused):
			out = append(out, StoredModule{ModuleInfo: ModuleInfo{Digest: d}, Refused: refused})
		case errors.Is(err, ErrModuleUnknown):
			// removed from the folder since it was listed
		case err != nil:
			return nil, err
		default:
			out = append(out, StoredModule{ModuleInfo: info})
		}
	}
	return out, nil
}

func (g *Gates) storedDigests() ([]string, error) {
	g.mu.Lock()
	digests := make([]string, 0, len(g.pending))
	for d := range g.pending {
		digests = append(digests, d)
	}
	g.mu.Unlock()
	if g.dir != "" {
		entries, err := os.ReadDir(g.dir)
		if err != nil {
			return nil, fmt.Errorf("govhost: module folder: %w", err)
		}
		for _, e := range entries {
			d, ok := strings.CutSuffix(e.Name(), ".wasm")
			if ok && e.Type().IsRegular() && governance.IsDigest(d) {
				digests = append(digests, d)
			}
		}
	}
	sort.Strings(digests)
	return digests, nil
}

func infoOf(m *host.Module) ModuleInfo {
	info := ModuleInfo{Digest: m.Digest(), Kind: m.Kind(), Exports: m.Exports(), Size: m.Size()}
	if b, ok := builtin.ByDigest(m.Digest()); ok {
		info.Builtin = b.Name
	}
	return info
}

// refusal wraps the host's refusal of a module; other errors (the host
// closed, a folder that cannot be read) stay as they are.
func refusal(err error, digest string) error {
	var ge *host.GuestError
	if errors.As(err, &ge) {
		return &ModuleRefusedError{Code: ge.Code, Digest: digest, Err: err}
	}
	return err
}
