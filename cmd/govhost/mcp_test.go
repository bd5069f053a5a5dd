package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMCP_UsageErrors: bad command lines exit 2 before anything starts.
func TestMCP_UsageErrors(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"mcp", "--data", data, "node", "server.js"}, "goes after --"},
		{[]string{"mcp", "--data", data}, "requires at least 1 arg"},
		{[]string{"mcp", "--data", data, "--approve", "maybe", "--", "true"}, "--approve"},
		{[]string{"mcp", "--data", data, "--log-level", "loud", "--", "true"}, "--log-level"},
		{[]string{"mcp", "--data", data, "--map", filepath.Join(data, "missing.json"), "--", "true"}, "invalid tool mapping"},
		{[]string{"mcp", "--server", "http://127.0.0.1:1", "--policy", "p.json", "--", "true"}, "sidecar holds the policy"},
		{[]string{"mcp", "--data", data, "--policy-id", "not-a-uuid", "--", "true"}, "--policy-id must be a UUID"},
	} {
		code, _, stderr := runCLI(t, "", c.args...)
		require.Equal(t, exitUsage, code, "%v: %s", c.args, stderr)
		require.Contains(t, stderr, c.says)
	}
}
