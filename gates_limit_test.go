package govhost_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// TestBuiltinGates_EvaluateTheLargestAcceptedInput: every built-in gate
// evaluates arguments of abi.MaxArgumentsBytes — the most any front end
// lets through — within the host's default memory limit, so an accepted
// input never fails a gate for memory. (The call timeout is lifted: how
// fast is a benchmark's business, not a test's.)
func TestBuiltinGates_EvaluateTheLargestAcceptedInput(t *testing.T) {
	ctx := context.Background()
	cfg := host.NewConfig().WithCompilationCacheDir(wasmCache).WithCallTimeout(10 * time.Minute).WithPoolSize(1)
	h, err := host.New(ctx, cfg)
	require.NoError(t, err)
	defer h.Close(ctx)
	pad := func(prefix string, key string, extra map[string]any) []byte {
		m := map[string]any{key: ""}
		for k, v := range extra {
			m[k] = v
		}
		base, _ := json.Marshal(m)
		m[key] = prefix + strings.Repeat("a", abi.MaxArgumentsBytes-len(base)-len(prefix))
		out, _ := json.Marshal(m)
		require.Len(t, out, abi.MaxArgumentsBytes)
		return out
	}
	for _, c := range []struct {
		module, tool, config string
		args                 []byte
	}{
		{"destructive", "bash", `{}`, pad("echo ", "command", nil)},
		{"pathguard", "write", `{"kind":"workspace","root":"/w"}`, pad("", "content", map[string]any{"file_path": "/w/big.txt"})},
		{"permission", "write", `{"preset":"allow_all"}`, pad("", "content", map[string]any{"file_path": "/w/big.txt"})},
		{"duties", "write", `{"incompatible":{"merge":["write"]}}`, pad("", "content", map[string]any{"file_path": "/w/big.txt"})},
	} {
		m, ok := builtin.Lookup(c.module)
		require.True(t, ok, c.module)
		mod, err := h.LoadTrusted(ctx, m.Wasm, m.Digest)
		require.NoError(t, err)
		g, err := h.Gate(ctx, mod, []byte(c.config))
		require.NoError(t, err, c.module)
		_, err = g.Evaluate(ctx, abi.GateInput{ABIVersion: abi.Version, GateID: c.module, Phase: abi.PhaseCheck, Tool: c.tool,
			Operation: "execute_command", Arguments: c.args})
		require.NoError(t, err, "%s: an accepted input must not fail the gate", c.module)
	}
}
