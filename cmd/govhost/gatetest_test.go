package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/govhost/govhost/gatetest"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const destructiveCases = `
gate: destructive
cases:
  - name: rm -rf is denied
    input: {tool: bash, arguments: {command: rm -rf /tmp/x}}
    want: {decision: deny, reason_code: destructive.rm_recursive_force}
  - name: ls is allowed
    input: {tool: bash, arguments: {command: ls}}
    want: {decision: allow, reason_code: destructive.none}
`

func TestTest_BuiltinGatePasses(t *testing.T) {
	cases := writeFile(t, "cases.yaml", destructiveCases)
	// Flags after the cases file, as in the documented usage.
	code, stdout, stderr := runCLI(t, "", "test", cases, "--gate", "destructive")
	if code != exitOK {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{`ok    rm -rf is denied`, `ok    ls is allowed`, "PASS: 2 passed, 0 failed"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in\n%s", want, stdout)
		}
	}
}

func TestTest_FailureDiffAndJSON(t *testing.T) {
	cases := writeFile(t, "cases.yaml", strings.Replace(destructiveCases, "reason_code: destructive.none", "reason_code: destructive.other", 1))
	code, stdout, _ := runCLI(t, "", "test", "--gate", "destructive", cases)
	if code != exitInvalid {
		t.Fatalf("code %d\n%s", code, stdout)
	}
	if !strings.Contains(stdout, `FAIL  ls is allowed`) || !strings.Contains(stdout, `reason_code: want destructive.other, got destructive.none`) {
		t.Errorf("no diff in\n%s", stdout)
	}
	code, stdout, _ = runCLI(t, "", "test", "--json", "--gate", "destructive", cases)
	if code != exitInvalid {
		t.Fatalf("code %d", code)
	}
	var rep gatetest.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if rep.Passed != 1 || rep.Failed != 1 || rep.Cases[1].Diff[0].Field != "reason_code" || rep.SHA256 == "" {
		t.Errorf("report %+v", rep)
	}
}

func TestTest_ConfigFlag(t *testing.T) {
	cases := writeFile(t, "cases.json", `{"cases":[{"name":"bash denied","input":{"tool":"bash"},"want":{"decision":"deny","reason_code":"cgate.tool_denied"}}]}`)
	gate := fixtureFile(t, "c_gate.wasm")
	if code, stdout, _ := runCLI(t, "", "test", cases, "--gate", gate); code != exitInvalid {
		t.Fatalf("default config denies web_fetch only: code %d\n%s", code, stdout)
	}
	cfg := writeFile(t, "cfg.json", `{"deny_tool":"bash"}`)
	if code, stdout, stderr := runCLI(t, "", "test", cases, "--gate", gate, "--config", "@"+cfg); code != exitOK {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestTest_UsageErrors(t *testing.T) {
	cases := writeFile(t, "cases.yaml", destructiveCases)
	for name, args := range map[string][]string{
		"no gate":        {"test", cases},
		"no cases":       {"test", "--gate", "destructive"},
		"unknown gate":   {"test", cases, "--gate", "nosuchgate"},
		"missing module": {"test", cases, "--gate", filepath.Join(t.TempDir(), "x.wasm")},
		"bad cases":      {"test", writeFile(t, "bad.json", `{"cases":[]}`), "--gate", "destructive"},
		"bad config":     {"test", cases, "--gate", "destructive", "--config", "{"},
		"wrong digest":   {"test", cases, "--gate", "destructive", "--sha256", strings.Repeat("0", 64)},
		"not a module":   {"test", cases, "--gate", writeFile(t, "g.wasm", "not wasm")},
	} {
		t.Run(name, func(t *testing.T) {
			if code, stdout, stderr := runCLI(t, "", args...); code != exitUsage || stderr == "" {
				t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

func TestBench_Compare(t *testing.T) {
	in := writeFile(t, "in.jsonl", `{"tool":"bash","arguments":{"command":"rm -rf /"}}`)
	code, stdout, stderr := runCLI(t, "", "bench", "--compare", "--gate", fixtureFile(t, "allow.wasm"), "--gate", fixtureFile(t, "c_gate.wasm"),
		"--input", in, "--iterations", "20", "--warmup", "2", "--cold-runs", "1")
	if code != exitOK {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{`allow.wasm |`, `c_gate.wasm |`, "| 1.00× |", "20 timed calls per gate"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in\n%s", want, stdout)
		}
	}
	code, stdout, _ = runCLI(t, "", "bench", "--json", "--gate", fixtureFile(t, "c_gate.wasm"), "--input", in, "--iterations", "5", "--warmup", "1", "--cold-runs", "1")
	var res []map[string]any
	if code != exitOK || json.Unmarshal([]byte(stdout), &res) != nil || len(res) != 1 || res[0]["decisions"] == nil {
		t.Fatalf("code %d\n%s", code, stdout)
	}
	for name, args := range map[string][]string{
		"no input":         {"bench", "--gate", "destructive"},
		"compare one gate": {"bench", "--compare", "--gate", "destructive", "--input", in},
		"unknown gate":     {"bench", "--gate", "nosuch", "--input", in},
		"bad input":        {"bench", "--gate", "destructive", "--input", writeFile(t, "x.json", "{")},
	} {
		if code, _, _ := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("%s: code %d", name, code)
		}
	}
}

func TestGateNew(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	code, stdout, stderr := runCLI(t, "", "gate", "new", "--lang", "c", "--dir", dir, "mygate")
	if code != exitOK || !strings.Contains(stdout, filepath.Join(dir, "gate.c")) || !strings.Contains(stdout, "make test") {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	for name, args := range map[string][]string{
		"exists":   {"gate", "new", "--lang", "c", "--dir", dir, "mygate"},
		"bad lang": {"gate", "new", "--lang", "cobol", "--dir", filepath.Join(t.TempDir(), "q"), "mygate"},
		"bad name": {"gate", "new", "--lang", "c", "--dir", filepath.Join(t.TempDir(), "q"), "My Gate"},
		"no name":  {"gate", "new", "--lang", "c"},
	} {
		if code, _, _ := runCLI(t, "", args...); code != exitUsage {
			t.Errorf("%s: code %d", name, code)
		}
	}
}
