package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// checkArgs are the arguments of `plugin check` in tests: a compilation
// cache shared with the host tests, so the Go-built fixtures compile once.
func checkArgs(args ...string) []string {
	return append([]string{"plugin", "check", "--cache-dir", filepath.Join(os.TempDir(), "govhost-test-wazero-cache")}, args...)
}

// fixtureFile writes an embedded fixture to a temporary file.
func fixtureFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, wasmfixtures.Bytes(name), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPluginCheck_ValidGate(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", checkArgs(fixtureFile(t, "toolgate.wasm"))...)
	if code != exitOK {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"abi:      native, version 1", "gate_evaluate", "sha256:   ", "smoke:    bash", "result:   valid gate"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in\n%s", want, stdout)
		}
	}
}

// TestPluginCheck_CGate: the gate written in C from abi/README.md alone is
// a valid gate.
func TestPluginCheck_CGate(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", checkArgs("--config", `{"deny_tool":"bash"}`, fixtureFile(t, "c_gate.wasm"))...)
	if code != exitOK || !strings.Contains(stdout, "bash   -> deny cgate.tool_denied") || !strings.Contains(stdout, "gate:     cgate 1.0.0") {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestPluginCheck_Extism: an Extism go-pdk module is reported as such.
func TestPluginCheck_Extism(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", checkArgs(fixtureFile(t, "extism_gate.wasm"))...)
	if code != exitOK || !strings.Contains(stdout, "abi:      extism") {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestPluginCheck_JSON(t *testing.T) {
	p := fixtureFile(t, "toolgate.wasm")
	code, stdout, _ := runCLI(t, "", checkArgs("--json", "--config", `{"deny_tools":["bash"]}`, p)...)
	if code != exitOK {
		t.Fatalf("code %d: %s", code, stdout)
	}
	var rep gatetest.CheckReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Valid || rep.Kind != "native" || rep.ABIVersion != 1 || len(rep.SHA256) != 64 || len(rep.Smoke) != len(gatetest.SmokeInputs) {
		t.Fatalf("report %+v", rep)
	}
	if rep.Smoke[0].Decision != "deny" || rep.Smoke[0].ReasonCode != "toolgate.tool_denied" {
		t.Fatalf("configuration not applied: %+v", rep.Smoke[0])
	}
}

func TestPluginCheck_InvalidGates(t *testing.T) {
	for fixture, code := range map[string]string{
		"trap.wasm":           "gate.trap",
		"missing_export.wasm": "gate.missing_export",
		"wrong_version.wasm":  "gate.abi_version",
		"garbage.wasm":        "gate.bad_output",
	} {
		t.Run(fixture, func(t *testing.T) {
			status, stdout, _ := runCLI(t, "", checkArgs("--json", "--timeout", "200ms", fixtureFile(t, fixture))...)
			if status != exitInvalid {
				t.Fatalf("status %d: %s", status, stdout)
			}
			var rep gatetest.CheckReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Valid || rep.ReasonCode != code {
				t.Fatalf("report %+v", rep)
			}
		})
	}
}

func TestPluginCheck_DigestMismatch(t *testing.T) {
	status, stdout, _ := runCLI(t, "", checkArgs("--sha256", strings.Repeat("0", 64), fixtureFile(t, "allow.wasm"))...)
	if status != exitInvalid || !strings.Contains(stdout, "does not match") {
		t.Fatalf("status %d: %s", status, stdout)
	}
}

func TestPluginCheck_Usage(t *testing.T) {
	for _, args := range [][]string{
		{"plugin"},
		{"plugin", "inspect", "x.wasm"},
		{"plugin", "check"},
		{"plugin", "check", "a.wasm", "b.wasm"},
		{"plugin", "check", filepath.Join(t.TempDir(), "missing.wasm")},
		{"plugin", "check", "--config", "{", "x.wasm"},
		{"plugin", "check", "--bogus", "x.wasm"},
	} {
		if status, _, _ := runCLI(t, "", args...); status != exitUsage {
			t.Errorf("%v: status %d", args, status)
		}
	}
}

// TestPluginCheck_EscapesGuestText: a description carrying escape
// sequences, a carriage return, a bidi override and a newline that forges a
// "result:" line reaches the terminal escaped: no control character is
// printed and the only result line is the host's.
func TestPluginCheck_EscapesGuestText(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", checkArgs(fixtureFile(t, "describe_inject.wasm"))...)
	if code != exitOK {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	for _, r := range stdout {
		if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u202e') {
			t.Fatalf("control character %U printed:\n%q", r, stdout)
		}
	}
	results := 0
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "result:") {
			results++
		}
	}
	if results != 1 || !strings.Contains(stdout, `gate:     "evil\x1b[2J" "1\nresult:   valid gate"`) {
		t.Fatalf("guest text not escaped:\n%s", stdout)
	}
}
