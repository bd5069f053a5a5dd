package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
)

// govhostExecutable writes a `govhost` executable into dir: this test
// binary run as govhost (asGovhostEnv), so installed command hooks run the
// real hook command.
func govhostExecutable(t *testing.T, dir string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	path := filepath.Join(dir, "govhost")
	script := "#!/bin/sh\n" + asGovhostEnv + "=1 exec '" + self + "' \"$@\"\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

// TestDoctor_CanaryThroughEveryInstalledHook installs all five agents'
// hooks against a real `govhost serve` with the default policy and runs
// doctor: each canary "rm -rf /" goes through exactly what the settings
// name and is blocked. Then it breaks one thing at a time — the Claude
// Code HTTP hook's $GOVHOST_TOKEN unset, Cursor's failClosed removed,
// Codex's command replaced by one that answers {} — and doctor exits 1
// naming the agent and the reason each time.
func TestDoctor_CanaryThroughEveryInstalledHook(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	data := filepath.Join(t.TempDir(), "data")
	srv := startServe(t, data)
	bin := govhostExecutable(t, t.TempDir())
	project := t.TempDir()
	for _, agent := range agents.Agents() {
		code, out, errs := runCLI(t, "", "install", "--agent", string(agent), "--hook-binary", bin, "--data", data, "--url", srv.url)
		require.Equal(t, 0, code, "%s %s", out, errs)
	}
	token, err := os.ReadFile(filepath.Join(data, "token"))
	require.NoError(t, err)
	t.Setenv("GOVHOST_TOKEN", strings.TrimSpace(string(token)))
	doctor := func() (int, doctorReport, string) {
		code, out, errs := runCLI(t, "", "doctor", "--json", "--data", data, "--url", srv.url, "--project", project)
		var rep doctorReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		return code, rep, errs
	}
	code, rep, errs := doctor()
	require.Equal(t, 0, code, "%+v %s", rep, errs)
	require.True(t, rep.Sidecar.OK)
	require.Len(t, rep.Agents, 5)
	for _, ar := range rep.Agents {
		require.True(t, ar.OK, "%+v", ar)
		require.NotNil(t, ar.Canary, ar.Agent)
		require.True(t, ar.Canary.Blocked, "%s: %+v", ar.Agent, ar.Canary)
		want := map[string]string{"claude": "blocks", "cursor": "blocks", "gemini": "blocks", "codex": "runs the tool", "copilot": "runs the tool"}[ar.Agent]
		require.Equal(t, want, ar.OnHookFailure, ar.Agent)
	}
	claude := rep.Agents[0]
	require.Equal(t, "claude", claude.Agent)
	require.Equal(t, "POST "+srv.url+"/v1/hooks/claude-code", claude.Canary.Via, "the canary goes where the settings say")

	// The text form says the same, one line per agent.
	code, out, _ := runCLI(t, "", "doctor", "--data", data, "--url", srv.url, "--project", project)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "when the hook fails, codex runs the tool")
	require.Contains(t, out, `canary PreToolUse "rm -rf /" via POST `+srv.url+"/v1/hooks/claude-code: denied")

	// $GOVHOST_TOKEN unset: the HTTP hook sends an empty bearer.
	t.Setenv("GOVHOST_TOKEN", "")
	code, _, errs = doctor()
	require.Equal(t, exitInvalid, code)
	require.Contains(t, errs, "claude (user): token unreachable: $GOVHOST_TOKEN is not set")
	t.Setenv("GOVHOST_TOKEN", strings.TrimSpace(string(token)))

	// Cursor without failClosed.
	cursorFile := filepath.Join(home, ".cursor", "hooks.json")
	edit(t, cursorFile, func(s string) string { return strings.ReplaceAll(s, `"failClosed": true`, `"failClosed": false`) })
	code, _, errs = doctor()
	require.Equal(t, exitInvalid, code)
	require.Contains(t, errs, "cursor (user): ")
	require.Contains(t, errs, "failClosed is not true")
	code, _, _ = runCLI(t, "", "install", "--agent", "cursor", "--hook-binary", bin, "--data", data, "--url", srv.url)
	require.Equal(t, 0, code)

	// A Codex command that answers {}: installed, and guarding nothing.
	codexFile := filepath.Join(home, ".codex", "hooks.json")
	var doc map[string]any
	raw, err := os.ReadFile(codexFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &doc))
	for _, group := range doc["hooks"].(map[string]any)["PreToolUse"].([]any) {
		for _, h := range group.(map[string]any)["hooks"].([]any) {
			h.(map[string]any)["command"] = "echo '{}' # govhost-hook"
		}
	}
	raw, _ = json.Marshal(doc)
	require.NoError(t, os.WriteFile(codexFile, raw, 0o644))
	code, _, errs = doctor()
	require.Equal(t, exitInvalid, code)
	require.Contains(t, errs, "codex (user): ")
	require.Contains(t, errs, "the installed command does not block a destructive call")
	require.NotContains(t, errs, "cursor", "a reinstall fixed Cursor")

	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, srv.wait(t))
}

func edit(t *testing.T, path string, fn func(string) string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(fn(string(raw))), 0o644))
}
