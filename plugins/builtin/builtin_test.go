package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/plugins/internal/gatetable"
)

// TestBuiltin_TablesThroughWasm runs each gate's own table (the one its
// native tests run, plugins/<name>/testdata/cases.json) through the
// embedded .wasm module on the real host: same table, same answers.
func TestBuiltin_TablesThroughWasm(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithPoolSize(1))
	require.NoError(t, err)
	defer h.Close(ctx)
	for _, name := range builtin.Names() {
		t.Run(name, func(t *testing.T) {
			m, ok := builtin.Lookup(name)
			require.True(t, ok)
			require.Equal(t, governance.SHA256Hex(m.Wasm), m.Digest)
			mod, err := h.Load(ctx, m.Wasm, m.Digest)
			require.NoError(t, err)
			table := gatetable.Load(t, filepath.Join("..", name, "testdata", "cases.json"), name)
			for _, c := range table.Cases {
				config := c.Config
				if len(config) == 0 {
					config = json.RawMessage("{}")
				}
				gate, err := h.Gate(ctx, mod, config)
				require.NoError(t, err, c.Name)
				c.Input.ABIVersion = abi.Version
				out, err := gate.Evaluate(ctx, c.Input)
				require.NoError(t, err, c.Name)
				c.Check(t, out)
			}
		})
	}
}

func TestBuiltin_Lookup(t *testing.T) {
	require.Equal(t, []string{"destructive", "pathguard", "permission"}, builtin.Names())
	m, ok := builtin.Lookup("permission")
	require.True(t, ok)
	byDigest, ok := builtin.ByDigest(m.Digest)
	require.True(t, ok)
	require.Equal(t, "permission", byDigest.Name)
	_, ok = builtin.Lookup("nope")
	require.False(t, ok)
	_, ok = builtin.ByDigest(governance.SHA256Hex(nil))
	require.False(t, ok)
}
