package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goodBundle bundles the demo task and returns the data directory and the
// bundle folder.
func goodBundle(t *testing.T) (string, string) {
	t.Helper()
	data, task := demoTask(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	code, _, stderr := runCLI(t, "", "cert", "bundle", "--data", data, "--task", task, "--out", dir)
	require.Equal(t, exitOK, code, stderr)
	return data, dir
}

func copyBundle(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(out, os.DirFS(dir)))
	return out
}

// TestCertVerify_HugeFilesRefusedUnread: a 2 GiB certificate.json (and
// chain.jsonl), sparse so the test writes nothing, is refused by its size
// with exit 2 before it is read: the verifier allocates no more than a
// few megabytes.
func TestCertVerify_HugeFilesRefusedUnread(t *testing.T) {
	_, good := goodBundle(t)
	for _, name := range []string{"certificate.json", "chain.jsonl", "policy.json", "checkpoint"} {
		t.Run(name, func(t *testing.T) {
			dir := copyBundle(t, good)
			require.NoError(t, os.Truncate(filepath.Join(dir, name), 2<<30))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			code, _, stderr := runCLI(t, "", "cert", "verify", dir)
			runtime.ReadMemStats(&after)
			require.Equal(t, exitUsage, code, stderr)
			require.Contains(t, stderr, "size limit")
			require.Contains(t, stderr, name)
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "read the file instead of refusing it")
		})
	}
}

// TestCertVerify_SignedNoteSyntaxWithoutKey: a checkpoint that is not a
// C2SP signed note is unreadable input (exit 2) with or without --key.
func TestCertVerify_SignedNoteSyntaxWithoutKey(t *testing.T) {
	data, good := goodBundle(t)
	_, vkey, _ := runCLI(t, "", "cert", "key", "show", "--data", data)
	note, err := os.ReadFile(filepath.Join(good, "checkpoint"))
	require.NoError(t, err)
	text, sigs, ok := strings.Cut(string(note), "\n\n")
	require.True(t, ok)
	sig := strings.TrimSuffix(sigs, "\n")
	unknown := strings.Repeat("— other+key AAAAAAAAAAAAAAAAAAAAAA==\n", 100)
	for name, bad := range map[string]string{
		"trailing space":               text + "\n\n" + sig + " \n",
		"missing padding":              text + "\n\n" + strings.TrimRight(sig, "=") + "\n",
		"100 unknown signatures first": text + "\n\n" + unknown + sig + "\n",
		"hyphen for em dash":           text + "\n\n" + "-" + strings.TrimPrefix(sig, "—") + "\n",
		"carriage return":              text + "\r\n\n" + sig + "\n",
		"no signature":                 text + "\n\n",
		"short signature":              text + "\n\n— k AAAA\n",
	} {
		t.Run(name, func(t *testing.T) {
			if strings.TrimRight(sig, "=") == sig && name == "missing padding" {
				t.Skip("this key's signature has no padding")
			}
			dir := copyBundle(t, good)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "checkpoint"), []byte(bad), 0o644))
			for _, args := range [][]string{{dir}, {dir, "--key", strings.TrimSpace(vkey)}} {
				code, stdout, stderr := runCLI(t, "", append([]string{"cert", "verify"}, args...)...)
				require.Equal(t, exitUsage, code, "stdout %s stderr %s", stdout, stderr)
				require.Contains(t, stderr, "checkpoint")
			}
		})
	}
}

// TestCertVerify_OneExitPerClass: a repeated key is malformed input (exit
// 2) at the top level and nested, in the policy and in the certificate; a
// changed policy is a rule failure (exit 1) whose report still says what
// checkpoint the bundle has; --policy is required with the parts; a bad
// --key is a usage error.
func TestCertVerify_OneExitPerClass(t *testing.T) {
	_, good := goodBundle(t)
	edit := func(name, old, new string) string {
		dir := copyBundle(t, good)
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out := strings.Replace(string(b), old, new, 1)
		require.NotEqual(t, string(b), out)
		require.NoError(t, os.WriteFile(p, []byte(out), 0o644))
		return dir
	}
	for name, dir := range map[string]string{
		"policy top level":      edit("policy.json", `"version":"demo-1"`, `"version":"demo-1","version":"demo-1"`),
		"policy digest twice":   edit("policy.json", `"digest":"`, `"digest":"00","digest":"`),
		"policy nested":         edit("policy.json", `"gate_id":"destructive"`, `"gate_id":"destructive","gate_id":"destructive"`),
		"certificate top level": edit("certificate.json", `"process_grade":"FULL"`, `"process_grade":"FULL","process_grade":"FULL"`),
		"certificate nested":    edit("certificate.json", `"hard_deny":`, `"hard_deny":0,"hard_deny":`),
	} {
		code, stdout, stderr := runCLI(t, "", "cert", "verify", dir)
		require.Equal(t, exitUsage, code, "%s: stdout %s stderr %s", name, stdout, stderr)
		require.Contains(t, stderr, "appears twice", name)
	}

	changed := edit("policy.json", `"level":"hard"`, `"level":"soft"`)
	rep := verifyReport(t, exitInvalid, changed)
	require.Equal(t, "policy", rep["rule"])
	require.Contains(t, rep["checkpoint"], "unauthenticated", "the checkpoint is there, whatever failed before it")
	require.NotNil(t, rep["checkpoint_size"])
	require.NotNil(t, rep["checkpoint_head"])

	code, _, stderr := runCLI(t, "", "cert", "verify", "--cert", filepath.Join(good, "certificate.json"), "--chain", filepath.Join(good, "chain.jsonl"))
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "--policy")
	code, _, stderr = runCLI(t, "", "cert", "verify", good, "--key", "not-a-key")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "verifier key")
}

// TestCertBundle_CheckpointLogDirectory: --checkpoint-log DIR/ creates the
// directory and writes one checkpoint file into it (it used to write the
// bundle and exit 2); verify reads it back.
func TestCertBundle_CheckpointLogDirectory(t *testing.T) {
	data, task := demoTask(t)
	log := filepath.Join(t.TempDir(), "log") + "/"
	out := filepath.Join(t.TempDir(), "b")
	code, _, stderr := runCLI(t, "", "cert", "bundle", "--data", data, "--task", task, "--out", out, "--checkpoint-log", log)
	require.Equal(t, exitOK, code, stderr)
	files, err := filepath.Glob(filepath.Join(log, "*.checkpoint"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	rep := verifyReport(t, exitOK, out, "--checkpoints", log)
	require.EqualValues(t, 1, rep["later_checkpoints"])
}
