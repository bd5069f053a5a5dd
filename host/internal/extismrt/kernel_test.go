package extismrt

import (
	"context"
	"reflect"
	"testing"
	"unsafe"

	extism "github.com/extism/go-sdk"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"

	"github.com/govhost/govhost/abi"
)

// TestKernelFunctions_MatchSDK: the host's list of Extism kernel functions is
// exactly what the pinned extism go-sdk instantiates as extism:host/env.
func TestKernelFunctions_MatchSDK(t *testing.T) {
	ctx := context.Background()
	// The smallest Extism module: imports one kernel function.
	wasm := []byte{0, 'a', 's', 'm', 1, 0, 0, 0,
		1, 5, 1, 0x60, 0, 1, 0x7e, // type: () -> i64
		2, 0x20, 1, 15, 'e', 'x', 't', 'i', 's', 'm', ':', 'h', 'o', 's', 't', '/', 'e', 'n', 'v',
		12, 'i', 'n', 'p', 'u', 't', '_', 'l', 'e', 'n', 'g', 't', 'h', 0, 0}
	cp, err := extism.NewCompiledPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{EnableWasi: true}, nil)
	require.NoError(t, err)
	defer cp.Close(ctx)
	f := reflect.ValueOf(cp).Elem().FieldByName("runtime")
	rt := *(*wazero.Runtime)(unsafe.Pointer(f.UnsafeAddr()))
	env := rt.Module(abi.ImportModuleExtism)
	require.NotNil(t, env)
	defs := env.ExportedFunctionDefinitions()
	require.Len(t, kernel, len(defs))
	for name, def := range defs {
		require.True(t, KernelFunction(name, def.ParamTypes(), def.ResultTypes()), name)
	}
	require.False(t, KernelFunction("input_length", nil, nil), "the signature counts")
}
