package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// demoTask runs the demo in a fresh data directory and returns a copy of
// it and the task id of its certificate. The demo runs once per test
// binary (it is the slow part); each test gets its own copy.
func demoTask(t *testing.T) (string, string) {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp(testCacheDir, "cert-demo-") // removed with it by TestMain
		require.NoError(t, err)
		demoData = filepath.Join(dir, "data")
		code, stdout, stderr := runCLI(t, "", "demo", "--data", demoData)
		require.Equal(t, exitOK, code, stderr)
		i := strings.Index(stdout, `"task_boundary_id": "`)
		require.GreaterOrEqual(t, i, 0, stdout)
		demoTaskID = stdout[i+len(`"task_boundary_id": "`) : i+len(`"task_boundary_id": "`)+36]
	})
	require.NotEmpty(t, demoTaskID, "the demo failed in an earlier test")
	data := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.CopyFS(data, os.DirFS(demoData)))
	// The demo's close signed a checkpoint, so the copy has the key;
	// os.CopyFS does not keep the private key's mode 0600, which the
	// keyring insists on.
	if _, err := os.Stat(filepath.Join(data, "keys", "signing.key")); err == nil {
		require.NoError(t, os.Chmod(filepath.Join(data, "keys", "signing.key"), 0o600))
	}
	return data, demoTaskID
}

var (
	demoOnce             sync.Once
	demoData, demoTaskID string
)

func verifyReport(t *testing.T, wantCode int, args ...string) map[string]any {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", append([]string{"cert", "verify"}, args...)...)
	require.Equal(t, wantCode, code, "stdout %s stderr %s", stdout, stderr)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	return rep
}

func TestCert_BundleVerifyKeyRotate(t *testing.T) {
	data, task := demoTask(t)
	bundle := filepath.Join(t.TempDir(), "bundle")
	log := filepath.Join(t.TempDir(), "checkpoints.log")
	code, _, stderr := runCLI(t, "", "cert", "bundle", "--data", data, "--task", task, "--out", bundle, "--checkpoint-log", log)
	require.Equal(t, exitOK, code, stderr)
	code, vkey, stderr := runCLI(t, "", "cert", "key", "show", "--data", data)
	require.Equal(t, exitOK, code, stderr)
	vkey = strings.TrimSpace(vkey)
	info, err := os.Stat(filepath.Join(data, "keys", "signing.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	rep := verifyReport(t, exitOK, bundle)
	require.Equal(t, false, rep["authenticated"])
	require.Contains(t, rep["checkpoint"], "unauthenticated")
	rep = verifyReport(t, exitOK, bundle, "--key", vkey, "--checkpoints", log)
	require.Equal(t, true, rep["authenticated"])
	require.Equal(t, "FULL", rep["process_grade"])
	// The parts one by one.
	verifyReport(t, exitOK, "--cert", filepath.Join(bundle, "certificate.json"), "--chain", filepath.Join(bundle, "chain.jsonl"), "--policy", filepath.Join(bundle, "policy.json"))

	// Rotation: the new key signs from now on; the old bundle verifies
	// with the old key only.
	code, newKey, _ := runCLI(t, "", "cert", "key", "rotate", "--data", data)
	require.Equal(t, exitOK, code)
	newKey = strings.TrimSpace(newKey)
	require.NotEqual(t, vkey, newKey)
	verifyReport(t, exitOK, bundle, "--key", vkey)
	rep = verifyReport(t, exitInvalid, bundle, "--key", newKey)
	require.Equal(t, "checkpoint", rep["rule"])
	code, all, _ := runCLI(t, "", "cert", "key", "show", "--all", "--data", data)
	require.Equal(t, exitOK, code)
	require.Equal(t, newKey+"\n"+vkey+"\n", all)

	// An edited certificate, a forged chain line.
	edited := filepath.Join(t.TempDir(), "edited")
	require.NoError(t, os.CopyFS(edited, os.DirFS(bundle)))
	cert := filepath.Join(edited, "certificate.json")
	b, _ := os.ReadFile(cert)
	require.NoError(t, os.WriteFile(cert, []byte(strings.Replace(string(b), `"hard_deny":3`, `"hard_deny":0`, 1)), 0o644))
	rep = verifyReport(t, exitInvalid, edited)
	require.Equal(t, "gate_summary", rep["rule"])

	forged := filepath.Join(t.TempDir(), "forged")
	require.NoError(t, os.CopyFS(forged, os.DirFS(bundle)))
	chain := filepath.Join(forged, "chain.jsonl")
	b, _ = os.ReadFile(chain)
	out := strings.Replace(string(b), `"record_type":"operation_denied"`, `"record_type":"callable_completed","Record_Type":"operation_denied"`, 1)
	require.NotEqual(t, string(b), out)
	require.NoError(t, os.WriteFile(chain, []byte(out), 0o644))
	code, _, stderr = runCLI(t, "", "cert", "verify", forged)
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "line ")
	require.Contains(t, stderr, "Record_Type")

	// A correction after the task closed: appended, and the task still
	// bundles and verifies.
	var first map[string]any
	chainData, _ := os.ReadFile(filepath.Join(bundle, "chain.jsonl"))
	require.NoError(t, json.Unmarshal([]byte(strings.SplitN(string(chainData), "\n", 2)[0]), &first))
	code, stdout, stderr := runCLI(t, "", "chain", "supersede", "--data", data, "--chain", first["chain_id"].(string),
		"--record", first["record_id"].(string), "--fields", "tool_id", "--reason-code", "record.misfiled")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, `"record_type":"record_superseded"`)
	corrected := filepath.Join(t.TempDir(), "corrected")
	code, _, stderr = runCLI(t, "", "cert", "bundle", "--data", data, "--task", task, "--out", corrected, "--checkpoint-log", log)
	require.Equal(t, exitOK, code, stderr)
	verifyReport(t, exitOK, corrected, "--key", newKey, "--checkpoints", log)
	// The bundle made before the correction is the chain truncated to an
	// earlier valid head: the later checkpoint in the log catches it.
	rep = verifyReport(t, exitInvalid, bundle, "--key", vkey, "--key", newKey, "--checkpoints", log)
	require.Equal(t, "checkpoint", rep["rule"])
	require.Contains(t, rep["reason"], "truncated")
	code, _, _ = runCLI(t, "", "chain", "supersede", "--data", data, "--chain", first["chain_id"].(string), "--record", first["record_id"].(string), "--reason-code", "x")
	require.Equal(t, exitUsage, code, "a correction naming no field")

	// An unknown task, an unreadable bundle.
	code, _, _ = runCLI(t, "", "cert", "bundle", "--data", data, "--task", "00000000-0000-4000-8000-000000000000", "--out", filepath.Join(t.TempDir(), "x"))
	require.Equal(t, exitInvalid, code)
	code, _, _ = runCLI(t, "", "cert", "verify", filepath.Join(t.TempDir(), "missing"))
	require.Equal(t, exitUsage, code)
}
