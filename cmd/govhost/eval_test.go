package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/internal/wasmfixtures"
)

func evalLinesOut(t *testing.T, stdout string) []evalResult {
	t.Helper()
	var out []evalResult
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var r evalResult
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		out = append(out, r)
	}
	return out
}

func TestEval_OneGate(t *testing.T) {
	in := strings.Join([]string{
		`{"tool":"bash","arguments":{"command":"rm -fr build"}}`,
		`{"tool":"bash","arguments":{"command":"git status"}}`,
		``,
		`{"tool":"bash","arguments":{"command":"dd of=/dev/sda if=/dev/zero"}}`,
	}, "\n")
	code, stdout, stderr := runCLI(t, in, "eval", "--gate", "destructive", "--cache-dir", testCacheDir)
	require.Equal(t, exitOK, code, stderr)
	res := evalLinesOut(t, stdout)
	require.Len(t, res, 3)
	require.Equal(t, "deny", res[0].Decision)
	require.Equal(t, "destructive.rm_recursive_force", res[0].ReasonCode)
	require.Equal(t, "permission denied: bash is not allowed for this command", res[0].Message)
	require.Equal(t, "allow", res[1].Decision)
	require.Equal(t, "destructive.dd", res[2].ReasonCode)
	require.Len(t, res[2].Gates, 1)
}

func TestEval_BadInput(t *testing.T) {
	cache := testCacheDir
	code, stdout, _ := runCLI(t, "{nope\n"+`{"arguments":{}}`+"\n"+`{"tool":"bash","arguments":[1]}`+"\n"+`{"tool":"bash","arguments":{"command":"ls"}}`, "eval", "--gate", "destructive", "--cache-dir", cache)
	require.Equal(t, exitUsage, code)
	res := evalLinesOut(t, stdout)
	require.Len(t, res, 4, "one line out per request, in order")
	for _, r := range res[:3] {
		require.Equal(t, "eval.bad_request", r.ReasonCode)
		require.NotEmpty(t, r.Error)
	}
	require.Equal(t, "allow", res[3].Decision)

	for _, args := range [][]string{
		{"eval"},
		{"eval", "--gate", "destructive", "--policy", "x.json"},
		{"eval", "--gate", "nope", "--cache-dir", cache},
		{"eval", "--gate", "permission", "--config", `{"preset":"paranoid"}`, "--cache-dir", cache},
		{"eval", "--gate", "permission", "--config", `{"a":1.5}`, "--cache-dir", cache},
	} {
		code, _, stderr := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.NotEmpty(t, stderr)
	}
}

// TestEval_Batch runs 1,000 requests through three Wasm gates in one
// process (the issue asks for well under a second after load; timing is
// reported by the benchmark, not asserted here).
func TestEval_Batch(t *testing.T) {
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policyFile, []byte(`{"policy_id":"6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01","version":"1","gates":[
	  {"gate_id":"perm","module":"permission","level":"hard","order":1,"tool_ids":["bash","reader"],"config":{"preset":"safe"}},
	  {"gate_id":"paths","module":"pathguard","level":"hard","order":2,"tool_ids":["reader"],"config":{"kind":"guard_paths","allowed_paths":["`+dir+`"]}},
	  {"gate_id":"rm","module":"destructive","level":"advisory","order":3,"tool_ids":["bash"]}]}`), 0o644))
	var in strings.Builder
	for i := 0; i < 1000; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, `{"tool":"bash","arguments":{"command":"rm -rf /tmp/x%d"}}`+"\n", i)
		case 1:
			fmt.Fprintf(&in, `{"tool":"reader","arguments":{"path":"f%d.txt"},"cwd":%q}`+"\n", i, dir)
		case 2:
			fmt.Fprintf(&in, `{"tool":"reader","arguments":{"path":"/etc/hosts"},"cwd":%q}`+"\n", dir)
		}
	}
	code, stdout, stderr := runCLI(t, in.String(), "eval", "--policy", policyFile, "--cache-dir", testCacheDir)
	require.Equal(t, exitOK, code, stderr)
	res := evalLinesOut(t, stdout)
	require.Len(t, res, 1000)
	// safe preset: rm * is denied by the permission gate; the advisory
	// destructive gate's deny is reported but would not deny on its own.
	require.Equal(t, "deny", res[0].Decision)
	require.Equal(t, "permission.denied_by_rule", res[0].ReasonCode)
	require.Equal(t, "destructive.rm_recursive_force", res[0].Gates[1].ReasonCode)
	require.Equal(t, "allow", res[1].Decision)
	require.Equal(t, "deny", res[2].Decision)
	require.Equal(t, "paths", func() string {
		for _, g := range res[2].Gates {
			if g.Decision == "deny" {
				return g.GateID
			}
		}
		return ""
	}())
}

// A dry run can be given the task workspace a "$workspace" policy needs:
// --workspace for every line, a line's "workspace" for itself. Without one
// the policy denies path.no_workspace, as a task without a workspace does.
// The permission gate's rule maps keep the policy file's order.
func TestEval_WorkspaceAndRuleOrder(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	policyFile := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policyFile, []byte(`{"policy_id":"6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01","version":"1","gates":[
	  {"gate_id":"perm","module":"permission","level":"hard","order":1,"tool_ids":["bash","read"],
	   "config":{"lionagi":{"mode":"rules","deny":{"bash_tool":["rm *"],"bash":["sudo *"]},"allow":{"*":["*"]}}}},
	  {"gate_id":"paths","module":"pathguard","level":"hard","order":2,"tool_ids":["read"],"config":{"kind":"workspace","root":"$workspace"}}]}`), 0o644))
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	in := strings.Join([]string{
		fmt.Sprintf(`{"tool":"read","operation":"read_file","arguments":{"path":"x.txt"},"cwd":%q}`, a),
		fmt.Sprintf(`{"tool":"read","operation":"read_file","arguments":{"path":"x.txt"},"cwd":%q,"workspace":%q}`, a, b),
		`{"tool":"bash","arguments":{"command":"rm -rf x"}}`,
		`{"tool":"bash","arguments":{"command":"sudo ls"}}`,
	}, "\n")
	code, stdout, stderr := runCLI(t, in, "eval", "--policy", policyFile, "--workspace", a, "--cache-dir", testCacheDir)
	require.Equal(t, exitOK, code, stderr)
	res := evalLinesOut(t, stdout)
	require.Len(t, res, 4)
	require.Equal(t, "allow", res[0].Decision, "%+v", res[0])
	require.Equal(t, "deny", res[1].Decision)
	require.Equal(t, "path.outside_root", res[1].ReasonCode)
	require.Equal(t, "allow", res[2].Decision, "the later \"bash\" deny list replaced \"bash_tool\"'s: %+v", res[2])
	require.Equal(t, "deny", res[3].Decision)
	require.Equal(t, "sudo *", res[3].MatchedRule)

	code, stdout, stderr = runCLI(t, in[:strings.IndexByte(in, '\n')], "eval", "--policy", policyFile, "--cache-dir", testCacheDir)
	require.Equal(t, exitOK, code, stderr)
	res = evalLinesOut(t, stdout)
	require.Equal(t, "deny", res[0].Decision)
	require.Equal(t, "path.no_workspace", res[0].ReasonCode)
}

// TestEval_PolicyWithARefusedModuleAnswersNothing: the gates load side by
// side before the first request; a module the host refuses stops the run
// (usage exit, nothing answered) with that binding named and the host's
// reason code, even when a later binding's module loads fine.
func TestEval_PolicyWithARefusedModuleAnswersNothing(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.wasm"), wasmfixtures.Bytes("missing_export.wasm"), 0o644))
	policyFile := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policyFile, []byte(`{"policy_id":"6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e02","version":"1","gates":[
	  {"gate_id":"rm","module":"destructive","level":"hard","order":1,"tool_ids":["bash"]},
	  {"gate_id":"bad","module":"./bad.wasm","level":"hard","order":2,"tool_ids":["bash"]},
	  {"gate_id":"perm","module":"permission","level":"hard","order":3,"tool_ids":["bash"],"config":{"preset":"safe"}}]}`), 0o644))
	code, stdout, stderr := runCLI(t, `{"tool":"bash","arguments":{"command":"ls"}}`+"\n", "eval", "--policy", policyFile, "--cache-dir", testCacheDir)
	require.Equal(t, exitUsage, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "gate bad: ")
	require.Contains(t, stderr, "gate.missing_export")
}
