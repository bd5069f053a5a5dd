package native

import (
	"fmt"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/fault"
)

type signature struct {
	params, results []api.ValueType
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

var requiredExports = map[string]signature{
	abi.ExportABIVersion: {nil, []api.ValueType{i32}},
	abi.ExportAlloc:      {[]api.ValueType{i32}, []api.ValueType{i32}},
	abi.ExportEvaluate:   {[]api.ValueType{i32, i32}, []api.ValueType{i64}},
}

var optionalExports = map[string]signature{
	abi.ExportInitialize: {nil, nil},
	abi.ExportConfigure:  {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	abi.ExportDescribe:   {nil, []api.ValueType{i64}},
}

// Exports describes which ABI exports a checked module provides.
type Exports struct {
	Initialize, Configure, Describe bool
}

// Check verifies that cm has the exports of the native ABI v1 with their
// signatures and a memory whose minimum fits under limitPages.
func Check(cm wazero.CompiledModule, limitPages uint32) (Exports, error) {
	var ex Exports
	fns := cm.ExportedFunctions()
	for name, want := range requiredExports {
		def, ok := fns[name]
		if !ok {
			return ex, fault.New(fault.MissingExport, "load", "missing export "+name)
		}
		if !matches(def, want) {
			return ex, fault.New(fault.MissingExport, "load", "export "+name+" has the wrong signature")
		}
	}
	for name, want := range optionalExports {
		def, ok := fns[name]
		if !ok {
			continue
		}
		if !matches(def, want) {
			return ex, fault.New(fault.MissingExport, "load", "export "+name+" has the wrong signature")
		}
		switch name {
		case abi.ExportInitialize:
			ex.Initialize = true
		case abi.ExportConfigure:
			ex.Configure = true
		case abi.ExportDescribe:
			ex.Describe = true
		}
	}
	mem, ok := cm.ExportedMemories()[abi.ExportMemory]
	if !ok {
		return ex, fault.New(fault.MissingExport, "load", "missing exported memory")
	}
	if mem.Min() > limitPages {
		return ex, fault.New(fault.MemoryLimit, "load", fmt.Sprintf("memory minimum of %d pages exceeds the cap of %d", mem.Min(), limitPages))
	}
	return ex, nil
}

func matches(def api.FunctionDefinition, want signature) bool {
	return slices.Equal(def.ParamTypes(), want.params) && slices.Equal(def.ResultTypes(), want.results)
}
