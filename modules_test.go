package govhost_test

import (
	"context"
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
			require.Len(t, entries, 1, "one module file, no temporary file left")
		}
		_, err = gates.Module(ctx, governance.SHA256Hex([]byte("absent")))
		require.ErrorIs(t, err, govhost.ErrModuleUnknown)
	}
}
