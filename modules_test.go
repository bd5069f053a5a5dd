package govhost_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
	"github.com/govhost/govhost/plugins/builtin"
)

// TestGates_Upload: concurrent uploads of the same bytes store one file,
// exactly one of them says it created it; a refused module is a
// *ModuleRefusedError with the host's code and leaves the folder as it
// was; built-in bytes are recognised and never stored; with and without
// a folder.
func TestGates_Upload(t *testing.T) {
	ctx := context.Background()
	// The shared compilation cache: the built-in case compiles a Go-built module.
	h, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(wasmCache))
	require.NoError(t, err)
	defer h.Close(ctx)
	for _, folder := range []bool{true, false} {
		dir := ""
		if folder {
			dir = filepath.Join(t.TempDir(), govhost.ModulesDir)
		}
		gates, err := govhost.NewGates(h, dir)
		require.NoError(t, err)
		wasm := wasmfixtures.Bytes("allow.wasm")
		var created atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				info, c, err := gates.Upload(ctx, wasm)
				require.NoError(t, err)
				require.Equal(t, host.KindNative, info.Kind)
				if c {
					created.Add(1)
				}
			}()
		}
		wg.Wait()
		require.EqualValues(t, 1, created.Load(), "folder=%v: one upload created it", folder)
		stored, err := gates.Stored(ctx)
		require.NoError(t, err)
		require.Len(t, stored, 1)
		require.Equal(t, governance.SHA256Hex(wasm), stored[0].Digest)
		require.True(t, gates.ModuleAvailable(stored[0].Digest))

		_, _, err = gates.Upload(ctx, wasmfixtures.Bytes("reserved_name.wasm"))
		var refused *govhost.ModuleRefusedError
		require.ErrorAs(t, err, &refused)
		require.Equal(t, host.CodeReservedName, refused.Code)
		_, _, err = gates.Upload(ctx, nil)
		require.ErrorIs(t, err, govhost.ErrModuleEmpty)
		perm, _ := builtin.Lookup("permission")
		info, c, err := gates.Upload(ctx, perm.Wasm)
		require.NoError(t, err)
		require.False(t, c)
		require.Equal(t, "permission", info.Builtin)
		again, err := gates.Stored(ctx)
		require.NoError(t, err)
		require.Equal(t, stored, again, "refusals and built-ins store nothing")
		if folder {
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			d := governance.SHA256Hex(wasm)
			require.ElementsMatch(t, []string{d + ".wasm", d + ".meta"}, names, "one module file and the record of its check, no temporary file left")
		}
		_, err = gates.Module(ctx, governance.SHA256Hex([]byte("absent")))
		require.ErrorIs(t, err, govhost.ErrModuleUnknown)
	}
}

// TestGates_ARestartDescribesStoredModulesWithoutCompiling: modules
// uploaded before a restart are listed and described after it from the
// record of their check, so a start compiles nothing per stored module
// (counted: host.Compiles); a file put in the folder by hand is checked
// once, its refusal recorded; a host with other limits checks again.
func TestGates_ARestartDescribesStoredModulesWithoutCompiling(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(cfg host.Config) (*host.Host, *govhost.Gates) {
		h, err := host.New(ctx, cfg.WithCompilationCacheDir(wasmCache))
		require.NoError(t, err)
		t.Cleanup(func() { h.Close(ctx) })
		gates, err := govhost.NewGates(h, dir)
		require.NoError(t, err)
		return h, gates
	}
	_, before := open(host.NewConfig())
	const n = 24
	uploaded := map[string]govhost.ModuleInfo{}
	for i := range n {
		info, _, err := before.Upload(ctx, wasmfixtures.AnswerGate(fmt.Sprintf(`{"decision":"allow","reason_code":"r.n%d"}`, i), ""))
		require.NoError(t, err)
		uploaded[info.Digest] = info
	}
	bad := wasmfixtures.Bytes("bad_import.wasm")
	require.NoError(t, os.WriteFile(filepath.Join(dir, governance.SHA256Hex(bad)+".wasm"), bad, 0o644))

	h, after := open(host.NewConfig())
	list, err := after.Stored(ctx)
	require.NoError(t, err)
	require.Len(t, list, n+1)
	for _, m := range list {
		if m.Digest == governance.SHA256Hex(bad) {
			require.NotNil(t, m.Refused)
			require.Equal(t, host.CodeBadImport, m.Refused.Code)
			continue
		}
		require.Nil(t, m.Refused)
		require.Equal(t, uploaded[m.Digest], m.ModuleInfo)
	}
	require.EqualValues(t, 1, h.Compiles(), "only the module put in by hand was compiled")
	again, err := after.Stored(ctx)
	require.NoError(t, err)
	require.Len(t, again, len(list))
	for i := range list {
		require.Equal(t, list[i].ModuleInfo, again[i].ModuleInfo)
		if list[i].Refused != nil {
			require.Equal(t, list[i].Refused.Code, again[i].Refused.Code)
			require.Equal(t, list[i].Refused.Error(), again[i].Refused.Error(), "the host's message, recorded")
		}
	}
	for d, info := range uploaded {
		got, err := after.Module(ctx, d)
		require.NoError(t, err)
		require.Equal(t, info, got)
	}
	_, err = after.Module(ctx, governance.SHA256Hex(bad))
	var refused *govhost.ModuleRefusedError
	require.ErrorAs(t, err, &refused)
	require.EqualValues(t, 1, h.Compiles(), "the refusal was recorded, not found again")

	// A module whose record is gone or torn is checked again.
	some := list[0].Digest
	require.NoError(t, os.WriteFile(filepath.Join(dir, some+".meta"), []byte(`{"check":`), 0o644))
	got, err := after.Module(ctx, some)
	require.NoError(t, err)
	require.Equal(t, uploaded[some], got)
	require.EqualValues(t, 2, h.Compiles())

	// Other limits: the records do not hold, every module is checked again.
	stricter, other := open(host.NewConfig().WithMemoryLimitPages(200))
	relisted, err := other.Stored(ctx)
	require.NoError(t, err)
	require.Len(t, relisted, n+1)
	require.EqualValues(t, n+1, stricter.Compiles())
}

// TestGates_IdleCompiledModulesStayWithinTheirBudget: uploads past the
// budget of idle compiled modules (IdleModuleBytes; 8 MiB here) release the least recently used compiled modules (a later
// use compiles them again and they still work); a module a binding's gate
// runs is never released.
func TestGates_IdleCompiledModulesStayWithinTheirBudget(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(wasmCache))
	require.NoError(t, err)
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, filepath.Join(t.TempDir(), govhost.ModulesDir))
	require.NoError(t, err)
	const budget, each = 8 << 20, 1 << 20
	govhost.SetIdleModuleBytes(gates, budget)
	bind := func(digest string) govhost.ModuleInfo {
		b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
			GateID: "g-" + digest[:8], AdapterID: govhost.AdapterWasm, Level: governance.LevelHard, ToolIDs: []string{"bash"}, ModuleDigest: digest, Config: "{}",
		})
		require.NoError(t, err)
		_, err = gates.GateFor(ctx, b)
		require.NoError(t, err)
		info, err := gates.Module(ctx, digest)
		require.NoError(t, err)
		return info
	}
	first, _, err := gates.Upload(ctx, wasmfixtures.BigDataGate(each, 0))
	require.NoError(t, err)
	pinned, _, err := gates.Upload(ctx, wasmfixtures.BigDataGate(each, 1))
	require.NoError(t, err)
	bind(pinned.Digest)
	for i := 2; i < 24; i++ { // 22 MiB of data segments, over twice the budget
		_, _, err := gates.Upload(ctx, wasmfixtures.BigDataGate(each, byte(i)))
		require.NoError(t, err)
		idle, held := gates.CompiledBytes()
		require.LessOrEqual(t, idle, int64(budget), "upload %d", i)
		require.Greater(t, held, int64(each), "the bound module stays compiled")
	}
	compiles := h.Compiles()
	bind(pinned.Digest)
	require.Equal(t, compiles, h.Compiles(), "the bound module was never released")
	bind(first.Digest)
	require.Equal(t, compiles+1, h.Compiles(), "the first upload was released and is compiled again to run")
}
