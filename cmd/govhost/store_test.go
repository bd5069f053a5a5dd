package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/internal/pgtest"
)

// The policy commands on PostgreSQL: what one data directory (one server)
// puts and activates, another sees, through --store postgres and the
// connection string in $GOVHOST_DATABASE_URL.
func TestStoreFlag_PostgresSharesPoliciesAcrossDataDirectories(t *testing.T) {
	t.Setenv(govhost.DatabaseURLEnv, pgtest.Schema(t))
	// Built-in gates only: no user module to compile (and time out) under -race.
	dir := t.TempDir()
	data, file := filepath.Join(dir, "data"), filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"policy_id": "`+cliPolicyID+`", "version": "2026.11.1", "gates": [
    {"gate_id": "security.destructive", "module": "destructive", "level": "hard", "order": 10, "tool_ids": ["bash"], "config": {}}]}`), 0o644))
	code, stdout, stderr := runCLI(t, "", "--store", "postgres", "policy", "put", "--data", data, "--file", file)
	require.Equal(t, 0, code, stderr)
	put := decodeSummary(t, stdout)
	code, _, stderr = runCLI(t, "", "--store", "postgres", "policy", "activate", "--data", data, "--id", cliPolicyID, "--version", "2026.11.1", "--actor", "user:ops")
	require.Equal(t, 0, code, stderr)

	other := t.TempDir()
	code, stdout, stderr = runCLI(t, "", "--store", "postgres", "policy", "show", "--data", other, "--id", cliPolicyID, "--version", "2026.11.1")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, put.Digest)
	require.Contains(t, stdout, "active")

	// The Pebble store of that other directory has no such policy.
	code, _, _ = runCLI(t, "", "policy", "show", "--data", other, "--id", cliPolicyID, "--version", "2026.11.1")
	require.NotEqual(t, 0, code)
}

func TestStoreFlag_UnknownStoreIsRefusedWithoutEchoingIt(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "--store", "mysql://root:hunter2@db/x", "policy", "show", "--data", t.TempDir(), "--id", cliPolicyID, "--version", "1")
	require.Equal(t, exitUsage, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "unknown store")
	require.NotContains(t, stderr, "hunter2")
}
