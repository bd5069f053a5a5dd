package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPythonClient runs the Python client's own tests and its example
// agent loop against a real `govhost serve` (python3, standard library
// only). Without python3 it skips, except under CI, where it fails.
func TestPythonClient(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is required under CI for the Python client's tests")
		}
		t.Skip("python3 not installed: the Python client's tests need it")
	}
	data := filepath.Join(t.TempDir(), "data")
	// The client's tests speak LionAGI's tool names (reader, bash) and
	// expect its safe preset's escalations: they run under that policy, not
	// the default coding-agent policy.
	policyFile := filepath.Join(t.TempDir(), "lionagi-safe.json")
	require.NoError(t, os.WriteFile(policyFile, []byte(`{"policy_id": "6f1c2d3e-4b5a-4c6d-8e7f-000000000001", "version": "default-1", "gates": [
  {"gate_id": "destructive", "module": "destructive", "level": "hard", "order": 10, "tool_ids": ["bash"]},
  {"gate_id": "permission", "module": "permission", "level": "hard", "order": 20, "tool_ids": ["bash", "reader", "editor", "search", "context"], "config": {"preset": "safe"}}]}`), 0o600))
	s := startServe(t, data, "--policy", policyFile)
	pkg, err := filepath.Abs("../../clients/python")
	require.NoError(t, err)
	env := append(os.Environ(), "GOVHOST_URL="+s.url, "GOVHOST_DATA="+data, "PYTHONDONTWRITEBYTECODE=1")

	cmd := exec.Command(python, "-m", "unittest", "discover", "-v", "-s", filepath.Join(pkg, "tests"))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "OK")
	require.NotContains(t, string(out), "skipped", "the tests ran against the server")

	// The example is what a user runs against `make run`: a serve under
	// the default coding-agent policy, whose tool names it speaks.
	exampleData := filepath.Join(t.TempDir(), "data")
	d := startServe(t, exampleData)
	cmd = exec.Command(python, filepath.Join(pkg, "examples", "agent_loop.py"), d.url, exampleData)
	cmd.Env = append(os.Environ(), "GOVHOST_URL="+d.url, "GOVHOST_DATA="+exampleData, "PYTHONDONTWRITEBYTECODE=1", "GOVHOST_EXAMPLE_APPROVE=1")
	cmd.Dir = "../.."
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	text := string(out)
	require.Contains(t, text, `allow  read {"path": "README.md"}`)
	require.Contains(t, text, "deny   bash")
	require.Contains(t, text, "destructive.rm_recursive_force")
	require.Contains(t, text, "hello from a governed shell")
	require.True(t, strings.Contains(text, `"process_grade": "FULL"`), "%s", text)
}
