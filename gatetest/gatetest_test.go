package gatetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
	"github.com/govhost/govhost/sdk/gatecases"
)

func newHost(t *testing.T) *host.Host {
	t.Helper()
	ctx := context.Background()
	// The compilation cache the host tests share; a generous call timeout,
	// since a Go-built guest's runtime start can take long on a loaded
	// machine (these tests check verdicts, not speed).
	h, err := host.New(ctx, host.NewConfig().WithPoolSize(1).WithCallTimeout(30*time.Second).
		WithCompilationCacheDir(filepath.Join(os.TempDir(), "govhost-test-wazero-cache")))
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	return h
}

func load(t *testing.T, h *host.Host, wasm []byte) *host.Module {
	t.Helper()
	m, err := h.Load(context.Background(), wasm, host.AnyDigest)
	require.NoError(t, err)
	return m
}

const cGateCases = `
gate: cgate
description: c_gate.wasm denies one configured tool
config: {deny_tool: bash}
cases:
  - name: bash denied by the file's config
    input: {tool: bash, arguments: {command: ls}}
    want: {decision: deny, reason_code: cgate.tool_denied, matched_rule: deny_tool}
  - name: read allowed
    input: {tool: read}
    want: {decision: allow, reason_code: cgate.allowed, matched_rule: ""}
  - name: case config replaces the file's
    config: {deny_tool: read}
    input: {tool: read}
    want: {decision: deny, reason_code: cgate.tool_denied}
  - name: a refused configuration is the host's deny
    config: {deny_tool: ""}
    input: {tool: read}
    want: {decision: deny, reason_code: gate.config_rejected}
`

func TestRun_YAMLAndConfigPrecedence(t *testing.T) {
	h := newHost(t)
	m := load(t, h, wasmfixtures.Bytes("c_gate.wasm"))
	f, err := gatecases.Parse([]byte(cGateCases), true)
	require.NoError(t, err)
	rep, err := gatetest.Run(context.Background(), h, m, f, gatetest.Options{})
	require.NoError(t, err)
	require.Equal(t, 4, rep.Passed, "%+v", rep.Cases)
	require.Contains(t, rep.Cases[3].Error, "gate.config_rejected")

	// --config replaces the file's configuration, not a case's own.
	rep, err = gatetest.Run(context.Background(), h, m, f, gatetest.Options{Config: json.RawMessage(`{"deny_tool":"read"}`)})
	require.NoError(t, err)
	require.False(t, rep.Cases[0].Pass, "bash is allowed under --config")
	require.Equal(t, []gatecases.Difference{
		{Field: "decision", Want: "deny", Got: "allow"},
		{Field: "reason_code", Want: "cgate.tool_denied", Got: "cgate.allowed"},
		{Field: "matched_rule", Want: "deny_tool", Got: ""},
	}, rep.Cases[0].Diff)
	require.False(t, rep.Cases[1].Pass)
	require.True(t, rep.Cases[2].Pass)
	require.Equal(t, 2, rep.Failed)
	require.False(t, rep.OK())
}

func TestReport_TextQuotesGuestText(t *testing.T) {
	rep := gatetest.Report{File: "c.yaml", SHA256: "ab", Failed: 1, Cases: []gatetest.CaseResult{
		{Name: "evil", Diff: []gatecases.Difference{{Field: "message", Want: "", Got: "\x1b[2Jgotcha\u202e"}}},
	}}
	var b bytes.Buffer
	require.NoError(t, rep.WriteText(&b))
	require.NotContains(t, b.String(), "\x1b")
	require.NotContains(t, b.String(), "\u202e")
	require.Contains(t, b.String(), `FAIL  evil`)
	require.Contains(t, b.String(), `\x1b[2Jgotcha`)
	require.Contains(t, b.String(), "FAIL: 0 passed, 1 failed")

	b.Reset()
	require.NoError(t, rep.WriteJSON(&b))
	var back gatetest.Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	require.Equal(t, rep, back)
}

func TestRun_GuestFailureIsAVerdict(t *testing.T) {
	h := newHost(t)
	m := load(t, h, wasmfixtures.Bytes("trap.wasm"))
	f, err := gatecases.Parse([]byte(`{"cases":[{"name":"trap","input":{"tool":"x"},"want":{"decision":"deny","reason_code":"gate.trap"}}]}`), false)
	require.NoError(t, err)
	rep, err := gatetest.Run(context.Background(), h, m, f, gatetest.Options{})
	require.NoError(t, err)
	require.True(t, rep.OK(), "%+v", rep.Cases)
	require.Contains(t, rep.Cases[0].Error, "gate.trap")
}

func TestRun_ClosedHost(t *testing.T) {
	h := newHost(t)
	m := load(t, h, wasmfixtures.Bytes("allow.wasm"))
	require.NoError(t, h.Close(context.Background()))
	f, err := gatecases.Parse([]byte(`{"cases":[{"name":"a","input":{"tool":"x"},"want":{"decision":"allow","reason_code":"a.b"}}]}`), false)
	require.NoError(t, err)
	_, err = gatetest.Run(context.Background(), h, m, f, gatetest.Options{})
	require.ErrorIs(t, err, host.ErrClosed)
}

// TestRun_ExtismModule runs cases through a module built with Extism's Go
// PDK (testdata/extism): govhost test treats both guest ABIs alike.
func TestRun_ExtismModule(t *testing.T) {
	h := newHost(t)
	m := load(t, h, wasmfixtures.Bytes("extism_gate.wasm"))
	f, err := gatecases.Parse([]byte(`
config: {deny_tools: [bash]}
cases:
  - {name: denied tool, input: {tool: bash}, want: {decision: deny, reason_code: extismgate.tool_denied}}
  - {name: allowed tool, input: {tool: read}, want: {decision: allow, reason_code: extismgate.allowed}}
  - {name: a panic is a trap, input: {tool: panic}, want: {decision: deny, reason_code: gate.trap}}
  - {name: a declared failure is a trap, input: {tool: fail}, want: {decision: deny, reason_code: gate.trap}}
`), true)
	require.NoError(t, err)
	rep, err := gatetest.Run(context.Background(), h, m, f, gatetest.Options{})
	require.NoError(t, err)
	require.True(t, rep.OK(), "%+v", rep.Cases)
	for _, c := range rep.Cases {
		require.NotContains(t, c.Error, "GUEST-TEXT", "no guest text reaches the report")
	}
}
