package host

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/extismrt"
	"github.com/govhost/govhost/host/internal/fault"
	"github.com/govhost/govhost/host/internal/interrupt"
	"github.com/govhost/govhost/host/internal/native"
)

// Kind is the guest ABI a module follows.
type Kind string

const (
	// KindNative is govhost's gate ABI v1, called directly through wazero.
	KindNative Kind = "native"
	// KindExtism is a module built with an Extism PDK, run through Extism's
	// Go SDK.
	KindExtism Kind = "extism"
)

// Module is a compiled gate module pinned to its digest. It is owned by the
// Host that loaded it and valid until that Host is closed or releases it
// (Release).
type Module struct {
	host     *Host
	digest   string
	kind     Kind
	size     int
	exports  []string
	compiled wazero.CompiledModule // native
	runtime  wazero.Runtime        // the runtime compiled belongs to
	nativeEx native.Exports
	// nativeState says how a native instance is reset between task chains.
	nativeState native.State
	extism      *extismrt.Compiled // extism
	extismEx    extismrt.Exports
	// trusted is set once LoadTrusted has vouched for these bytes.
	trusted atomic.Bool
	// compiledBytes: CompiledBytes. released: Release let it go (under
	// the host's mu).
	compiledBytes int64
	released      bool
}

// Digest returns the hex sha256 of the module's bytes.
func (m *Module) Digest() string { return m.digest }

// Kind returns the module's guest ABI.
func (m *Module) Kind() Kind { return m.kind }

// Size returns the module's size in bytes.
func (m *Module) Size() int { return m.size }

// Exports returns the names of the module's exported functions and
// memories, sorted. The caller may modify the returned slice.
func (m *Module) Exports() []string { return append([]string(nil), m.exports...) }

// Configurable reports whether the module exports gate_configure, i.e.
// whether it can be bound with a non-empty configuration.
func (m *Module) Configurable() bool {
	if m.kind == KindExtism {
		return m.extismEx.Configure
	}
	return m.nativeEx.Configure
}

func (m *Module) close(ctx context.Context) {
	if m.compiled != nil {
		_ = m.compiled.Close(ctx)
	}
	if m.extism != nil {
		_ = m.extism.Close(ctx)
	}
}

// checkImports classifies a module by its imports and refuses, at load,
// every import the host would not satisfy: anything from extism:host/env
// makes it an Extism module and must be one of Extism's kernel functions;
// otherwise only WASI functions are allowed; and each must have the
// signature the host provides. (Imported memories, tables and globals were
// refused by the instrumentation pass.)
func (h *Host) checkImports(cm wazero.CompiledModule) (Kind, error) {
	kind := KindNative
	wasi := h.fast.Module(abi.ImportModuleWASI).ExportedFunctionDefinitions()
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		var ok bool
		switch mod {
		case abi.ImportModuleWASI:
			def, found := wasi[name]
			ok = found && slices.Equal(def.ParamTypes(), f.ParamTypes()) && slices.Equal(def.ResultTypes(), f.ResultTypes())
		case abi.ImportModuleExtism:
			kind = KindExtism
			ok = extismrt.KernelFunction(name, f.ParamTypes(), f.ResultTypes())
		}
		if !ok {
			return "", fault.New(fault.BadImport, "load", "imports a function the host does not provide with that signature")
		}
	}
	if len(cm.ImportedMemories()) > 0 {
		return "", fault.New(fault.BadImport, "load", "imports a memory")
	}
	return kind, nil
}

func exportNames(cm wazero.CompiledModule) []string {
	var names []string
	for name := range cm.ExportedFunctions() {
		if strings.HasPrefix(name, interrupt.ReservedPrefix) {
			continue
		}
		names = append(names, name)
	}
	// NB: the host's own exports (host/internal/interrupt) are not listed.
	for name := range cm.ExportedMemories() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
