package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

const cliPolicyID = "6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01"

// cliPolicy is a policy file with one .wasm gate and one built-in gate.
const cliPolicy = `{
  "policy_id": "` + cliPolicyID + `",
  "version": "VERSION",
  "gates": [
    {"gate_id": "user.redact", "module": "gates/redact.wasm", "level": "soft", "order": 20,
     "tool_ids": ["write_file"], "transform": true},
    {"gate_id": "security.destructive", "module": "destructive", "level": "hard", "order": 10,
     "tool_ids": ["bash"], "config": {}}
  ]
}`

// policyWorkspace writes the policy file (at version) and its module (the
// example gate, standing in for a user's redaction gate).
func policyWorkspace(t *testing.T, version string) (dataDir, file string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "gates"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gates", "redact.wasm"), wasmfixtures.Bytes("toolgate.wasm"), 0o644))
	file = filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(cliPolicy, "VERSION", version, 1)), 0o644))
	return filepath.Join(dir, "data"), file
}

type cliSummary struct {
	PolicyID     string `json:"policy_id"`
	Version      string `json:"version"`
	Digest       string `json:"digest"`
	ReleaseState string `json:"release_state"`
	Stored       *bool  `json:"stored"`
}

func decodeSummary(t *testing.T, stdout string) cliSummary {
	t.Helper()
	var s cliSummary
	require.NoError(t, json.Unmarshal([]byte(stdout), &s), stdout)
	return s
}

func TestPolicyCLI_RoundTrip(t *testing.T) {
	data, file := policyWorkspace(t, "2026.11.1")

	code, stdout, stderr := runCLI(t, "", "policy", "put", "--data", data, "--file", file)
	require.Equal(t, exitOK, code, stderr)
	put := decodeSummary(t, stdout)
	require.Equal(t, cliPolicyID, put.PolicyID)
	require.Equal(t, "2026.11.1", put.Version)
	require.Equal(t, "staged", put.ReleaseState)
	require.True(t, governance.IsDigest(put.Digest))
	require.True(t, *put.Stored)

	// The same file again: idempotent.
	code, stdout, stderr = runCLI(t, "", "policy", "put", "--data", data, "--file", file)
	require.Equal(t, exitOK, code, stderr)
	again := decodeSummary(t, stdout)
	require.Equal(t, put.Digest, again.Digest)
	require.False(t, *again.Stored)

	// Binding to the staged version is refused, naming the field.
	code, _, stderr = runCLI(t, "", "policy", "bind", "--data", data, "--id", cliPolicyID, "--version", "2026.11.1", "--scope", "global")
	require.Equal(t, exitInvalid, code)
	require.Contains(t, stderr, "policy_version")
	require.Contains(t, stderr, "staged")

	code, stdout, stderr = runCLI(t, "", "policy", "activate", "--data", data, "--id", cliPolicyID, "--version", "2026.11.1", "--actor", "user:ops")
	require.Equal(t, exitOK, code, stderr)
	act := decodeSummary(t, stdout)
	require.Equal(t, "active", act.ReleaseState)
	require.Equal(t, put.Digest, act.Digest)

	code, stdout, stderr = runCLI(t, "", "policy", "bind", "--data", data, "--id", cliPolicyID, "--version", "2026.11.1", "--scope", "role", "--selector", "dev")
	require.Equal(t, exitOK, code, stderr)
	var b governance.PolicyBinding
	require.NoError(t, json.Unmarshal([]byte(stdout), &b), stdout)
	require.Equal(t, governance.ScopeRole, b.Scope)

	code, stdout, stderr = runCLI(t, "", "policy", "resolve", "--data", data, "--role", "dev")
	require.Equal(t, exitOK, code, stderr)
	res := decodeSummary(t, stdout)
	require.Equal(t, "2026.11.1", res.Version)
	require.Equal(t, put.Digest, res.Digest)

	code, _, stderr = runCLI(t, "", "policy", "resolve", "--data", data, "--role", "ops")
	require.Equal(t, exitInvalid, code)
	require.Contains(t, stderr, "no policy bound")

	code, stdout, stderr = runCLI(t, "", "policy", "show", "--data", data, "--id", cliPolicyID, "--version", "2026.11.1")
	require.Equal(t, exitOK, code, stderr)
	var snap governance.PolicySnapshot
	require.NoError(t, json.Unmarshal([]byte(stdout), &snap), stdout)
	require.Equal(t, put.Digest, snap.Digest())
	by, ok := snap.ActivatedBy()
	require.True(t, ok)
	require.Equal(t, governance.ActorRef{Kind: "user", ID: "ops"}, by)
	require.Equal(t, "security.destructive", snap.GateBinding(0).GateID())

	// The module was copied into the data directory under its digest.
	d := snap.GateBinding(1).ModuleDigest()
	require.FileExists(t, filepath.Join(data, "modules", d+".wasm"))

	// An edited file under the same version is refused; the stored one stands.
	edited, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(edited), `"level": "soft"`, `"level": "advisory"`, 1)), 0o644))
	code, stdout, stderr = runCLI(t, "", "policy", "put", "--data", data, "--file", file)
	require.Equal(t, exitInvalid, code, stdout)
	require.Contains(t, stderr, "already stored with digest "+put.Digest)
	require.Contains(t, stderr, "give the edited policy a new version")
	code, stdout, _ = runCLI(t, "", "policy", "resolve", "--data", data, "--role", "dev")
	require.Equal(t, exitOK, code)
	require.Equal(t, put.Digest, decodeSummary(t, stdout).Digest)
}

func TestPolicyCLI_Refusals(t *testing.T) {
	data, file := policyWorkspace(t, "1")
	text, err := os.ReadFile(file)
	require.NoError(t, err)
	write := func(old, new string) {
		require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(text), old, new, 1)), 0o644))
	}
	cases := []struct{ name, old, new, want string }{
		{"duplicate gate id", `"gate_id": "user.redact"`, `"gate_id": "security.destructive"`, "gates[1].gate_id"},
		{"missing module", `gates/redact.wasm`, `gates/nope.wasm`, "gates[0].module"},
		{"unknown level", `"level": "soft"`, `"level": "fatal"`, "gates[0].level"},
	}
	for _, c := range cases {
		write(c.old, c.new)
		code, _, stderr := runCLI(t, "", "policy", "put", "--data", data, "--file", file)
		require.Equal(t, exitInvalid, code, c.name)
		require.Contains(t, stderr, c.want, c.name)
		code, _, stderr = runCLI(t, "", "policy", "show", "--data", data, "--id", cliPolicyID, "--version", "1")
		require.Equal(t, exitInvalid, code, "%s: nothing stored", c.name)
		require.Contains(t, stderr, "not found")
	}

	// A module that is not in the data directory makes activation fail.
	write("", "")
	code, stdout, stderr := runCLI(t, "", "policy", "put", "--data", data, "--file", file)
	require.Equal(t, exitOK, code, stderr)
	d := decodeSummary(t, stdout)
	entries, err := os.ReadDir(filepath.Join(data, "modules"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.NoError(t, os.Remove(filepath.Join(data, "modules", entries[0].Name())))
	code, _, stderr = runCLI(t, "", "policy", "activate", "--data", data, "--id", d.PolicyID, "--version", "1")
	require.Equal(t, exitInvalid, code)
	require.Contains(t, stderr, "gate_bindings[1].module_digest")

	for _, args := range [][]string{
		{"policy"},
		{"policy", "frob"},
		{"policy", "put", "--data", data},
		{"policy", "activate", "--data", data, "--id", "x", "--version", "1"},
		{"policy", "activate", "--data", data, "--id", cliPolicyID, "--version", "1", "--actor", "ops"},
		{"policy", "put", "--data", data, "--file", filepath.Join(data, "missing.json")},
	} {
		code, _, _ := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code, "%v", args)
	}
}

// TestPolicyShow_Default prints the default coding-agent policy as serve
// installs it for --data, per profile, and refuses what it cannot print.
func TestPolicyShow_Default(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	code, out, stderr := runCLI(t, "", "policy", "show", "--default", "--data", data)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, `"version": "balanced-1"`)
	abs, err := filepath.Abs(data)
	require.NoError(t, err)
	require.Contains(t, out, `"`+abs+`"`, "the agents are denied this data directory")
	require.NotContains(t, out, "$govhost_data")
	for _, p := range []string{"strict", "permissive"} {
		code, out, stderr = runCLI(t, "", "policy", "show", "--default", "--profile", p, "--data", data)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, `"version": "`+p+`-1"`)
	}
	code, _, stderr = runCLI(t, "", "policy", "show", "--default", "--profile", "lenient")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "unknown profile")
	code, _, _ = runCLI(t, "", "policy", "show", "--default", "--id", "6f1c2d3e-4b5a-4c6d-8e7f-000000000001")
	require.Equal(t, exitUsage, code)
	code, _, _ = runCLI(t, "", "policy", "show", "--profile", "strict", "--id", "6f1c2d3e-4b5a-4c6d-8e7f-000000000001", "--version", "x")
	require.Equal(t, exitUsage, code)
}
