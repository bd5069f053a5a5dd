package builtin_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/plugins/internal/gatetable"
)

// TestBuiltin_TablesThroughWasm runs each gate's own table (the one its
// native tests run, plugins/<name>/testdata/cases.json) through the
// embedded .wasm module on the real host with gatetest.Run, the runner of
// `govhost test`: same table, same answers, and every built-in invariant
// (gatetable.Check) holds for the Wasm verdicts too.
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
			mod, err := h.LoadTrusted(ctx, m.Wasm, m.Digest)
			require.NoError(t, err)
			table := gatetable.Load(t, filepath.Join("..", name, "testdata", "cases.json"), name)
			rep, err := gatetest.Run(ctx, h, mod, table.File, gatetest.Options{})
			require.NoError(t, err)
			require.Len(t, rep.Cases, len(table.Cases))
			for i, c := range table.Cases {
				res := rep.Cases[i]
				require.True(t, res.Pass, "%s: %+v %s", c.Name, res.Diff, res.Error)
				c.Check(t, abi.GateOutput{Decision: res.Got.Decision, ReasonCode: res.Got.ReasonCode,
					Message: res.Got.Message, Detail: res.Got.Detail, MatchedRule: res.Got.MatchedRule, DenyMessage: res.Got.DenyMessage, Arguments: res.Got.Arguments})
			}
		})
	}
}

func TestBuiltin_Lookup(t *testing.T) {
	require.Equal(t, []string{"destructive", "duties", "pathguard", "permission"}, builtin.Names())
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
