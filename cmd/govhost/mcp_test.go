package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/internal/pgtest"
	"github.com/govhost/govhost/policy/profiles"
)

// TestMCP_UsageErrors: bad command lines exit 2 before anything starts.
func TestMCP_UsageErrors(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"mcp", "--data", data, "node", "server.js"}, "goes after --"},
		{[]string{"mcp", "--data", data}, "no upstream"},
		{[]string{"mcp", "--data", data, "--listen", "127.0.0.1:0"}, "--listen and --upstream go together"},
		{[]string{"mcp", "--data", data, "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp", "--", "node"}, "no server command"},
		{[]string{"mcp", "--data", data, "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/mcp"}, "not a loopback address"},
		{[]string{"mcp", "--data", data, "--listen", "127.0.0.1:0", "--upstream", "ftp://x/mcp", "--policy", "p.json"}, "not an http(s) URL"},
		{[]string{"mcp", "--data", data, "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp", "--upstream-token-file", filepath.Join(data, "none")}, "no such file"},
		{[]string{"mcp", "--data", data, "--approve", "maybe", "--", "true"}, "--approve"},
		{[]string{"mcp", "--data", data, "--log-level", "loud", "--", "true"}, "--log-level"},
		{[]string{"mcp", "--data", data, "--map", filepath.Join(data, "missing.json"), "--", "true"}, "invalid tool mapping"},
		{[]string{"mcp", "--server", "http://127.0.0.1:1", "--policy", "p.json", "--", "true"}, "sidecar holds the policy"},
		{[]string{"mcp", "--data", data, "--policy-id", "not-a-uuid", "--", "true"}, "--policy-id must be a UUID"},
		{[]string{"mcp", "--data", data, "--profile", "lenient", "--", "true"}, `unknown profile "lenient"`},
		{[]string{"mcp", "--data", data, "--profile", "strict", "--policy", "p.json", "--", "true"}, "drop --policy"},
		{[]string{"mcp", "--server", "http://127.0.0.1:1", "--profile", "strict", "--", "true"}, "sidecar holds the policy"},
	} {
		code, _, stderr := runCLI(t, "", c.args...)
		require.Equal(t, exitUsage, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.says)
	}
}

// TestMCP_Profile: on a data directory with no bound policy, mcp installs
// the default coding-agent policy of --profile (balanced without it) and
// pins its session to it; a directory that already has one keeps it.
func TestMCP_Profile(t *testing.T) {
	if _, err := exec.LookPath("true"); err != nil {
		t.Skip("no true(1) to stand in for an MCP server")
	}
	data := filepath.Join(t.TempDir(), "data")
	strict, err := profiles.Version(profiles.Strict)
	require.NoError(t, err)
	code, _, stderr := runCLI(t, "", "mcp", "--data", data, "--profile", profiles.Strict, "--", "true")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stderr, "under policy "+profiles.PolicyID.String()+"@"+strict+";")

	code, _, stderr = runCLI(t, "", "mcp", "--data", data, "--profile", profiles.Permissive, "--", "true")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stderr, "@"+strict+";", "the bound policy stays")

	balanced, err := profiles.Version(profiles.Balanced)
	require.NoError(t, err)
	code, _, stderr = runCLI(t, "", "mcp", "--data", filepath.Join(t.TempDir(), "fresh"), "--", "true")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stderr, "@"+balanced+";")
}

// TestMCP_StoreFlag: the embedded proxy opens the store every command
// opens: with --store postgres, the policy it installs lands in
// PostgreSQL (another data directory sees it), not in the data
// directory's Pebble.
func TestMCP_StoreFlag(t *testing.T) {
	if _, err := exec.LookPath("true"); err != nil {
		t.Skip("no true(1) to stand in for an MCP server")
	}
	t.Setenv(govhost.DatabaseURLEnv, pgtest.Schema(t))
	data := filepath.Join(t.TempDir(), "data")
	strict, err := profiles.Version(profiles.Strict)
	require.NoError(t, err)
	code, _, stderr := runCLI(t, "", "--store", "postgres", "mcp", "--data", data, "--profile", profiles.Strict, "--", "true")
	require.Equal(t, exitOK, code, stderr)

	code, stdout, stderr := runCLI(t, "", "--store", "postgres", "policy", "show", "--data", t.TempDir(), "--id", profiles.PolicyID.String(), "--version", strict)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "active")
	code, _, _ = runCLI(t, "", "policy", "show", "--data", data, "--id", profiles.PolicyID.String(), "--version", strict)
	require.NotEqual(t, exitOK, code, "the data directory's Pebble store holds no policy")
}
