package interrupt

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/govhost/govhost/internal/wasmfixtures"
)

// Every fixture instruments into a module wazero accepts, with the flag
// exported.
func TestInstrument_AllFixtures(t *testing.T) {
	ctx := context.Background()
	// The host's fast runtime configuration and the tests' shared cache, so
	// that the host tests reuse what this compiles.
	cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(os.TempDir(), "govhost-test-wazero-cache"))
	require.NoError(t, err)
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache).WithDebugInfoEnabled(false))
	defer rt.Close(ctx)
	ents, err := wasmfixtures.FS.ReadDir("wasm")
	require.NoError(t, err)
	refused := map[string]error{
		"reserved_name.wasm":     ErrReservedName,
		"bad_import_global.wasm": ErrBadImport,
		"bad_import_table.wasm":  ErrBadImport,
	}
	for _, e := range ents {
		orig := wasmfixtures.Bytes(e.Name())
		res, err := Instrument(orig, Options{MemoryCapBytes: 32 << 20})
		if want := refused[e.Name()]; want != nil {
			require.ErrorIs(t, err, want, e.Name())
			continue
		}
		require.NoError(t, err, e.Name())
		t.Logf("%s: resettable %v, %d mutable globals", e.Name(), res.Resettable, len(res.MutableGlobals))
		out := res.Wasm
		if e.Name() == "extism_gate.wasm" {
			continue // the host runs Extism modules uninstrumented; spare a compile
		}
		_, err = rt.CompileModule(ctx, out)
		require.NoError(t, err, e.Name())
	}
}

// The loop fixture stops when the flag is set from another goroutine.
func TestInstrument_StopsLoop(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	res, err := Instrument(wasmfixtures.Bytes("loop.wasm"), Options{MemoryCapBytes: 32 << 20})
	require.NoError(t, err)
	mod, err := rt.InstantiateWithConfig(ctx, res.Wasm, wazero.NewModuleConfig().WithName(""))
	require.NoError(t, err)
	g := mod.ExportedGlobal(GlobalName)
	require.Equal(t, api.ValueTypeI32, g.Type())
	flag := g.(api.MutableGlobal)
	done := make(chan error, 1)
	go func() {
		_, err := mod.ExportedFunction("gate_evaluate").Call(ctx, 0, 0)
		done <- err
	}()
	flag.Set(1)
	require.ErrorContains(t, <-done, "unreachable")
}

func TestInstrument_Refuses(t *testing.T) {
	_, err := Instrument([]byte("not wasm"), Options{})
	require.ErrorIs(t, err, ErrUnsupported)
}

func TestImportsModule(t *testing.T) {
	yes, err := ImportsModule(wasmfixtures.Bytes("extism_gate.wasm"), "extism:host/env")
	require.NoError(t, err)
	require.True(t, yes)
	no, err := ImportsModule(wasmfixtures.Bytes("toolgate.wasm"), "extism:host/env")
	require.NoError(t, err)
	require.False(t, no)
	_, err = ImportsModule([]byte("nope"), "x")
	require.ErrorIs(t, err, ErrUnsupported)
}

// BenchmarkInstrument: the pass is linear in the module's size (compare
// ns/op across loops=; the compile that follows is not: see host's
// TestLoad_Timeout).
func BenchmarkInstrument(b *testing.B) {
	for _, n := range []int{1000, 10_000, 100_000} {
		body := append([]byte{0}, bytes.Repeat([]byte{0x03, 0x40, 0x0b}, n)...)
		body = append(body, 0x0b)
		m := []byte("\x00asm\x01\x00\x00\x00")
		m = append(m, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 5, 3, 1, 0, 1)
		code := appendU32([]byte{1}, uint32(len(body)))
		code = append(code, body...)
		m = appendU32(append(m, 10), uint32(len(code)))
		m = append(m, code...)
		b.Run(fmt.Sprintf("loops=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(m)))
			for i := 0; i < b.N; i++ {
				if _, err := Instrument(m, Options{MemoryCapBytes: 1 << 25}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
