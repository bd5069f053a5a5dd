package gatetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

func checkConfig(timeout time.Duration) host.Config {
	return host.NewConfig().WithPoolSize(1).WithCallTimeout(timeout).
		WithCompilationCacheDir(filepath.Join(os.TempDir(), "govhost-test-wazero-cache"))
}

// TestCheck_ValidGate: a configured native gate is valid; its facts and
// one verdict per smoke input are reported, the configuration applied.
func TestCheck_ValidGate(t *testing.T) {
	wasm := wasmfixtures.Bytes("toolgate.wasm")
	rep := gatetest.Check(context.Background(), checkConfig(30*time.Second), "toolgate.wasm", wasm, host.AnyDigest, []byte(`{"deny_tools":["bash"]}`))
	require.True(t, rep.Valid, rep.Error)
	require.Equal(t, governance.SHA256Hex(wasm), rep.SHA256)
	require.Equal(t, "native", rep.Kind)
	require.Equal(t, 1, rep.ABIVersion)
	require.Equal(t, len(wasm), rep.Size)
	require.Len(t, rep.Smoke, len(gatetest.SmokeInputs))
	require.Equal(t, "deny", rep.Smoke[0].Decision)
	require.Equal(t, "toolgate.tool_denied", rep.Smoke[0].ReasonCode)

	var text, doc bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	require.Contains(t, text.String(), "sha256:   "+rep.SHA256+"\n")
	require.True(t, strings.HasSuffix(text.String(), "result:   valid gate\n"), text.String())
	require.NoError(t, rep.WriteJSON(&doc))
	var back gatetest.CheckReport
	require.NoError(t, json.Unmarshal(doc.Bytes(), &back))
	require.Equal(t, rep, back)
}

// TestCheck_InvalidGates: a guest failure, a wrong digest and bytes that
// are no module are verdicts in the report, with the host's reason code
// where the guest failed and the actual digest where it was not expected.
func TestCheck_InvalidGates(t *testing.T) {
	ctx := context.Background()
	for fixture, code := range map[string]string{
		"trap.wasm":           "gate.trap",
		"missing_export.wasm": "gate.missing_export",
		"wrong_version.wasm":  "gate.abi_version",
	} {
		rep := gatetest.Check(ctx, checkConfig(time.Second), fixture, wasmfixtures.Bytes(fixture), host.AnyDigest, nil)
		require.False(t, rep.Valid, fixture)
		require.Equal(t, code, rep.ReasonCode, fixture)
		var text bytes.Buffer
		require.NoError(t, rep.WriteText(&text))
		require.Contains(t, text.String(), "result:   NOT a valid gate: ", fixture)
	}

	wasm := wasmfixtures.Bytes("allow.wasm")
	rep := gatetest.Check(ctx, checkConfig(time.Second), "allow.wasm", wasm, strings.Repeat("0", 64), nil)
	require.False(t, rep.Valid)
	require.Equal(t, governance.SHA256Hex(wasm), rep.SHA256, "the actual digest is reported")

	rep = gatetest.Check(ctx, checkConfig(time.Second), "text.wasm", []byte("not a module"), host.AnyDigest, nil)
	require.False(t, rep.Valid)
	require.NotEmpty(t, rep.Error)
}

// TestCheck_TextQuotesGuestText: a description that tries to clear the
// terminal and forge a result line is printed quoted.
func TestCheck_TextQuotesGuestText(t *testing.T) {
	rep := gatetest.Check(context.Background(), checkConfig(30*time.Second), "describe_inject.wasm", wasmfixtures.Bytes("describe_inject.wasm"), host.AnyDigest, nil)
	require.True(t, rep.Valid, rep.Error)
	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	require.NotContains(t, text.String(), "\x1b")
	require.Equal(t, 1, strings.Count(text.String(), "\nresult:"))
}
