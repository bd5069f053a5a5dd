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
	m, err := g.loader(digest)(ctx, wasm, digest)
	if err != nil {
		return ModuleInfo{}, false, refusal(err, digest)
	}
	if created, err = g.store(digest, wasm); err != nil {
		return ModuleInfo{}, false, fmt.Errorf("govhost: storing module %s: %w", digest, err)
	}
	// NB: only once stored: a module in loaded is one policies may use.
	g.mu.Lock()
	if _, ok := g.loaded[digest]; !ok {
		g.loaded[digest] = m
	}
	g.mu.Unlock()
	return infoOf(m), created, nil
}

// Module describes the module with digest: stored or built in, loaded
// (and checked) on first use. An unknown digest is ErrModuleUnknown; a
// stored module the host now refuses is a *ModuleRefusedError.
func (g *Gates) Module(ctx context.Context, digest string) (ModuleInfo, error) {
	m, err := g.module(ctx, digest)
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
// them). Each is loaded on first use, so the first listing after a start
// compiles every stored module (from the compilation cache when it has
// them).
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
