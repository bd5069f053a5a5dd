package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

type tableCase struct {
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config"`
	Input  abi.GateInput   `json:"input"`
	// Want holds the fields a case checks; an absent field is not checked,
	// as in the gates' native table tests.
	Want struct {
		Decision    abi.Decision `json:"decision"`
		ReasonCode  string       `json:"reason_code"`
		MatchedRule *string      `json:"matched_rule"`
		Detail      *string      `json:"detail"`
		Message     *string      `json:"message"`
	} `json:"want"`
}

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
			data, err := os.ReadFile(filepath.Join("..", name, "testdata", "cases.json"))
			require.NoError(t, err)
			var table struct {
				Cases []tableCase `json:"cases"`
			}
			require.NoError(t, json.Unmarshal(data, &table))
			require.NotEmpty(t, table.Cases)
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
				require.Equal(t, c.Want.Decision, out.Decision, c.Name)
				require.Equal(t, c.Want.ReasonCode, out.ReasonCode, c.Name)
				for _, f := range []struct {
					want *string
					got  string
				}{
					{c.Want.MatchedRule, out.MatchedRule}, {c.Want.Detail, out.Detail}, {c.Want.Message, out.Message},
				} {
					if f.want != nil {
						require.Equal(t, *f.want, f.got, c.Name)
					}
				}
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
