package gatebench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/gatebench"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

func TestRun_Compare(t *testing.T) {
	w, err := gatebench.LoadWorkload(writeFile(t, "in.jsonl", `{"tool":"bash","arguments":{"command":"ls"}}
{"tool":"web_fetch","arguments":{"url":"https://x"}}`))
	require.NoError(t, err)
	require.Len(t, w.Inputs, 2)
	mods := []gatebench.Module{
		{Name: "c_gate.wasm", Wasm: wasmfixtures.Bytes("c_gate.wasm")},
		{Name: "allow.wasm", Wasm: wasmfixtures.Bytes("allow.wasm")},
	}
	res, err := gatebench.Run(context.Background(), mods, w, gatebench.Options{Iterations: 50, Warmup: 5, ColdRuns: 1})
	require.NoError(t, err)
	require.Len(t, res, 2)
	for _, r := range res {
		t.Logf("%s: cold %v, cached %v, median %v, p99 %v, memory %d", r.Module, r.ColdLoad, r.ColdLoadCached, r.Median, r.P99, r.MemoryBytes)
		require.Equal(t, 50, r.Calls)
		require.Positive(t, r.ColdLoad)
		require.Positive(t, r.ColdLoadCached)
		require.LessOrEqual(t, r.Min, r.Median)
		require.LessOrEqual(t, r.Median, r.P99)
		require.NotZero(t, r.MemoryBytes)
		require.Len(t, r.SHA256, 64)
	}
	// c_gate denies web_fetch by default and allows the rest: both inputs
	// alternate, so the verdicts split evenly.
	require.Equal(t, map[string]int{"allow cgate.allowed": 25, "deny cgate.tool_denied": 25}, res[0].Decisions)
	require.Equal(t, 2*65536, int(res[1].MemoryBytes))

	var b bytes.Buffer
	require.NoError(t, gatebench.WriteCompare(&b, res))
	require.Contains(t, b.String(), `| c_gate.wasm |`)
	require.Contains(t, b.String(), "| 1.00× |")
	b.Reset()
	require.NoError(t, gatebench.WriteText(&b, res))
	require.Contains(t, b.String(), "allow cgate.allowed ×25")
	b.Reset()
	require.NoError(t, gatebench.WriteJSON(&b, res))
	var back []gatebench.Result
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	require.Equal(t, res, back)
}

func TestRun_Errors(t *testing.T) {
	ctx := context.Background()
	w, err := gatebench.LoadWorkload(writeFile(t, "in.json", `{"tool":"bash"}`))
	require.NoError(t, err)
	w.Config = json.RawMessage(`{"deny_tool":""}`)
	_, err = gatebench.Run(ctx, []gatebench.Module{{Name: "c", Wasm: wasmfixtures.Bytes("c_gate.wasm")}}, w, gatebench.Options{Iterations: 1, Warmup: 1, ColdRuns: 1})
	require.ErrorContains(t, err, "gate.config_rejected")

	_, err = gatebench.Run(ctx, []gatebench.Module{{Name: "trap", Wasm: wasmfixtures.Bytes("trap.wasm")}}, gatebench.Workload{Inputs: w.Inputs}, gatebench.Options{Iterations: 1, Warmup: 1, ColdRuns: 1})
	require.ErrorContains(t, err, "gate.trap")

	_, err = gatebench.Run(ctx, nil, gatebench.Workload{}, gatebench.Options{})
	require.ErrorIs(t, err, gatebench.ErrNoInputs)
}

func TestLoadWorkload(t *testing.T) {
	w, err := gatebench.LoadWorkload(writeFile(t, "c.yaml", "config: {deny_tool: bash}\ncases:\n  - name: a\n    input: {tool: bash}\n    want: {decision: deny, reason_code: x.y}\n"))
	require.NoError(t, err)
	require.Len(t, w.Inputs, 1)
	require.JSONEq(t, `{"deny_tool":"bash"}`, string(w.Config))
	require.Equal(t, "check", string(w.Inputs[0].Phase))

	w, err = gatebench.LoadWorkload(writeFile(t, "c.json", `{"cases":[{"name":"a","input":{"tool":"t"},"want":{"decision":"allow","reason_code":"a"}}]}`))
	require.NoError(t, err)
	require.Equal(t, "t", w.Inputs[0].Tool)

	for name, doc := range map[string]string{
		"empty":   "",
		"no tool": `{"arguments":{}}`,
		"unknown": `{"tool":"x","tol":1}`,
		"broken":  `{"tool":`,
	} {
		_, err := gatebench.LoadWorkload(writeFile(t, "bad.json", doc))
		require.Error(t, err, name)
	}
	_, err = gatebench.LoadWorkload(filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}
