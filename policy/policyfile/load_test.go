package policyfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/policyfile"
)

// emptyModule is the smallest valid WebAssembly module: magic and version.
var emptyModule = []byte("\x00asm\x01\x00\x00\x00")

var builtinBytes = map[string][]byte{"destructive": []byte("\x00asm\x01\x00\x00\x00destructive")}

func builtins(name string) ([]byte, bool) { b, ok := builtinBytes[name]; return b, ok }

const example = `{
  "policy_id": "6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01",
  "version": "2026.11.1",
  "gates": [
    {"gate_id": "user.redact", "module": "gates/redact.wasm", "adapter_id": "wasm", "level": "soft",
     "order": 20, "tool_ids": ["write_file"], "transform": true},
    {"gate_id": "security.destructive", "module": "destructive", "level": "hard", "order": 10,
     "tool_ids": ["bash"], "config": {"extra": ["shred"], "max": 12345678901234567890, "name": "é"}}
  ]
}`

func dirWithModule(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "gates"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gates", "redact.wasm"), emptyModule, 0o644))
	return dir
}

func TestLoad_Example(t *testing.T) {
	dir := dirWithModule(t)
	snap, err := policyfile.Load([]byte(example), "policy.json", policyfile.FileResolver(dir, builtins))
	require.NoError(t, err)
	require.Equal(t, "6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01", snap.PolicyID().String())
	require.Equal(t, "2026.11.1", snap.Version())
	require.Equal(t, governance.Staged, snap.ReleaseState())
	require.Equal(t, 2, snap.NumGateBindings())

	d := snap.GateBinding(0) // sorted by order
	require.Equal(t, "security.destructive", d.GateID())
	require.Equal(t, policyfile.DefaultAdapter, d.AdapterID())
	require.Equal(t, governance.LevelHard, d.Level())
	require.Equal(t, governance.SHA256Hex(builtinBytes["destructive"]), d.ModuleDigest())
	require.Equal(t, `{"extra":["shred"],"max":12345678901234567890,"name":"é"}`, d.Config(), "exact integers, canonical")
	require.False(t, d.Transform())

	r := snap.GateBinding(1)
	require.Equal(t, governance.SHA256Hex(emptyModule), r.ModuleDigest())
	require.Equal(t, "{}", r.Config())
	require.True(t, r.Transform())
	require.Equal(t, []string{"write_file"}, r.ToolIDs())

	again, err := policyfile.Load([]byte(example), "policy.json", policyfile.FileResolver(dir, builtins))
	require.NoError(t, err)
	require.Equal(t, snap.Digest(), again.Digest(), "same file, same digest")

	// New module bytes under the same path: another digest.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gates", "redact.wasm"), append(emptyModule, 0), 0o644))
	edited, err := policyfile.Load([]byte(example), "policy.json", policyfile.FileResolver(dir, builtins))
	require.NoError(t, err)
	require.NotEqual(t, snap.Digest(), edited.Digest())
}

func TestLoadFile_RelativeToFile(t *testing.T) {
	dir := dirWithModule(t)
	path := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(path, []byte(example), 0o644))
	_, err := policyfile.LoadFile(path, policyfile.FileResolver(dir, builtins))
	require.NoError(t, err)
}

func TestLoad_Invalid(t *testing.T) {
	cases := []struct {
		name, old, new, field string
		cause                 error
	}{
		{"duplicate gate id", `"gate_id": "user.redact"`, `"gate_id": "security.destructive"`, "gates[1].gate_id", nil},
		{"missing module file", `gates/redact.wasm`, `gates/missing.wasm`, "gates[0].module", policyfile.ErrModuleNotFound},
		{"unknown built-in", `"module": "destructive"`, `"module": "nuke"`, "gates[1].module", policyfile.ErrModuleNotFound},
		{"unknown level", `"level": "soft"`, `"level": "fatal"`, "gates[0].level", nil},
		{"duplicate order", `"order": 20`, `"order": 10`, "gates[1].order", nil},
		{"negative order", `"order": 20`, `"order": -1`, "gates[0].order", nil},
		{"fractional order", `"order": 20`, `"order": 2.5`, "gates[0].order", nil},
		{"empty tool ids", `"tool_ids": ["write_file"]`, `"tool_ids": []`, "gates[0].tool_ids", nil},
		{"duplicate tool id", `"tool_ids": ["write_file"]`, `"tool_ids": ["write_file", "write_file"]`, "gates[0].tool_ids[1]", nil},
		{"missing tool ids", `"tool_ids": ["write_file"], `, ``, "gates[0].tool_ids", nil},
		{"float in config", `"max": 12345678901234567890`, `"max": 1.5`, "gates[1].config", governance.ErrNotCanonical},
		{"unknown gate field", `"transform": true`, `"transfrom": true`, "gates[0].transfrom", nil},
		{"unknown top field", `"version"`, `"versoin"`, "versoin", nil},
		{"bad policy id", `6f1c3a52-2a7e`, `zz1c3a52-2a7e`, "policy_id", nil},
		{"empty version", `"2026.11.1"`, `""`, "version", nil},
		{"transform not bool", `"transform": true`, `"transform": "yes"`, "gates[0].transform", nil},
		{"empty adapter", `"adapter_id": "wasm"`, `"adapter_id": ""`, "gates[0].adapter_id", governance.ErrInvalid},
		{"gate not an object", `"gates": [`, `"gates": [42, `, "gates[0]", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := dirWithModule(t)
			bad := strings.Replace(example, c.old, c.new, 1)
			require.NotEqual(t, example, bad, "edit did not apply")
			_, err := policyfile.Load([]byte(bad), "policy.json", policyfile.FileResolver(dir, builtins))
			var fe *policyfile.FieldError
			require.ErrorAs(t, err, &fe, "%v", err)
			require.ErrorIs(t, err, policyfile.ErrInvalidFile)
			require.Equal(t, c.field, fe.Field, "%v", err)
			require.Contains(t, err.Error(), "policy.json: "+c.field+":")
			if c.cause != nil {
				require.True(t, errors.Is(err, c.cause), "%v", err)
			}
		})
	}
}

func TestLoad_NotJSON(t *testing.T) {
	_, err := policyfile.Load([]byte(`{"policy_id":`), "p.json", nil)
	var fe *policyfile.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "$", fe.Field)
}

func TestFileResolver_NotWasm(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.wasm"), []byte("#!/bin/sh"), 0o644))
	_, err := policyfile.FileResolver(dir, nil)("x.wasm")
	require.ErrorContains(t, err, "not a WebAssembly binary module")
	_, err = policyfile.FileResolver(dir, nil)("permission")
	require.ErrorIs(t, err, policyfile.ErrModuleNotFound)
}
