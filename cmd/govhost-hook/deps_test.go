package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps_NoStoreNoWasmRuntime keeps govhost-hook small: it starts per
// tool call, so it must not link Pebble, wazero, Extism or cobra, nor the
// controller and the hook sessions (the sidecar's side of a hook).
func TestDeps_NoStoreNoWasmRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"cockroachdb/pebble", "tetratelabs/wazero", "extism/go-sdk", "spf13/cobra", "jackc/pgx",
			"govhost/govhost/controller", "govhost/govhost/hooks", "govhost/govhost/service"} {
			if strings.Contains(dep, heavy) {
				t.Errorf("govhost-hook links %s", dep)
			}
		}
	}
}
