package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// TestPluginAddList: `plugin add` checks and stores a module by its sha256
// (a second add is "already stored"), `plugin list` lists it; a module the
// host refuses exits 1 and stores nothing.
func TestPluginAddList(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	gate := fixtureFile(t, "c_gate.wasm")
	digest := governance.SHA256Hex(wasmfixtures.Bytes("c_gate.wasm"))

	code, stdout, stderr := runCLI(t, "", "plugin", "add", "--data", data, gate)
	if code != exitOK || !strings.Contains(stdout, "sha256:   "+digest) || !strings.Contains(stdout, "abi:      native") || !strings.Contains(stdout, "result:   stored;") {
		t.Fatalf("add: code %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "modules", digest+".wasm")); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCLI(t, "", "plugin", "add", "--data", data, "--json", gate)
	var up api.ModuleUpload
	if code != exitOK || json.Unmarshal([]byte(stdout), &up) != nil || up.Created || up.SHA256 != digest {
		t.Fatalf("second add: code %d\n%s", code, stdout)
	}

	code, stdout, stderr = runCLI(t, "", "plugin", "add", "--data", data, fixtureFile(t, "bad_import.wasm"))
	if code != exitInvalid || !strings.Contains(stderr, "gate.bad_import") {
		t.Fatalf("hostile add: code %d\n%s\n%s", code, stdout, stderr)
	}
	stored, err := filepath.Glob(filepath.Join(data, "modules", "*.wasm"))
	if err != nil || len(stored) != 1 {
		t.Fatalf("the refused module was stored: %v %v", stored, err)
	}

	code, stdout, stderr = runCLI(t, "", "plugin", "list", "--data", data, "--json")
	var list api.ModuleList
	if code != exitOK || json.Unmarshal([]byte(stdout), &list) != nil || len(list.Modules) != 1 || list.Modules[0].SHA256 != digest || list.Modules[0].ABIKind != "native" {
		t.Fatalf("list: code %d\n%s\n%s", code, stdout, stderr)
	}
}
