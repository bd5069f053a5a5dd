package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

// TestAgentSession_ContinuesAcrossASidecarKill runs a Claude Code session
// through the command hook against a real `govhost serve`, kills the
// server with SIGKILL between a PreToolUse and its PostToolUse, starts it
// again on the same data directory and carries on: the PostToolUse is
// answered (exit 0, not 409), later calls are governed in the same task,
// and SessionEnd certifies one task whose chain holds every call, the
// lost outcome recorded as such.
func TestAgentSession_ContinuesAcrossASidecarKill(t *testing.T) {
	data := t.TempDir()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	readme := filepath.Join(ws, "README.md")
	require.NoError(t, os.WriteFile(readme, []byte("# project\n"), 0o644))
	policyFile := filepath.Join(t.TempDir(), "agents-policy.json")
	require.NoError(t, os.WriteFile(policyFile, agentPolicyFile(t), 0o644))
	tokenFile := filepath.Join(data, "token")

	srv := startServe(t, data, "--policy", policyFile)
	sid := "session-" + uuid.NewString()
	hook := func(srv *served, event string, fields map[string]any) (int, string, string) {
		m := map[string]any{"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": ws, "permission_mode": "default", "hook_event_name": event}
		for k, v := range fields {
			m[k] = v
		}
		in, _ := json.Marshal(m)
		return runCLI(t, string(in), "hook", "--agent", "claude", "--url", srv.url, "--token-file", tokenFile)
	}
	read := map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": readme}}
	call := func(id string, extra map[string]any) map[string]any {
		m := map[string]any{"tool_use_id": id}
		for k, v := range read {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	ok := func(code int, out, errs string) {
		t.Helper()
		require.Equal(t, 0, code, "%s %s", out, errs)
	}
	ok(hook(srv, "SessionStart", map[string]any{"source": "startup"}))
	ok(hook(srv, "PreToolUse", call("toolu_1", nil)))
	ok(hook(srv, "PostToolUse", call("toolu_1", map[string]any{"tool_response": map[string]any{"ok": true}})))
	ok(hook(srv, "PreToolUse", call("toolu_2", nil)))

	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGKILL))
	srv.wait(t)
	srv = startServe(t, data, "--policy", policyFile)

	ok(hook(srv, "PostToolUse", call("toolu_2", map[string]any{"tool_response": map[string]any{"ok": true}})))
	ok(hook(srv, "PreToolUse", call("toolu_3", nil)))
	ok(hook(srv, "PostToolUse", call("toolu_3", map[string]any{"tool_response": map[string]any{"ok": true}})))
	code, out, _ := hook(srv, "PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf /"}, "tool_use_id": "toolu_4"})
	require.Equal(t, 2, code, out)
	code, out, errs := hook(srv, "SessionEnd", map[string]any{"reason": "logout"})
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "session certified FULL")

	// The notice's commands work as printed while the sidecar runs.
	var notice struct {
		SystemMessage string `json:"systemMessage"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &notice))
	_, check, found := strings.Cut(notice.SystemMessage, "check it: ")
	require.True(t, found, notice.SystemMessage)
	bin := filepath.Dir(govhostExecutable(t, t.TempDir()))
	sh := exec.Command("/bin/sh", "-c", check)
	sh.Dir = t.TempDir()
	sh.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	printed, err := sh.CombinedOutput()
	require.NoError(t, err, "%s: %s", check, printed)
	require.Contains(t, string(printed), `"valid":true`)

	req, _ := http.NewRequest(http.MethodGet, srv.url+"/v1/hooks/claude/sessions/"+sid, nil)
	token, err := os.ReadFile(tokenFile)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var sess struct {
		ChainID     string                      `json:"chain_id"`
		Certificate *governance.TaskCertificate `json:"certificate"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sess))
	resp.Body.Close()
	require.NotNil(t, sess.Certificate)

	code, exported, errs := runCLI(t, "", "chain", "export", "--addr", srv.url, "--token-file", tokenFile, "--chain", sess.ChainID)
	require.Equal(t, 0, code, errs)
	started, lost, closed := 0, 0, 0
	for _, line := range strings.Split(strings.TrimSpace(exported), "\n") {
		var rec struct {
			Type    string `json:"record_type"`
			Payload string `json:"payload_json"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		switch rec.Type {
		case string(governance.OperationStarted):
			started++
		case string(governance.CallableFailed):
			require.Contains(t, rec.Payload, `"failure":"outcome_lost"`)
			lost++
		case string(governance.TaskClosed):
			closed++
		}
	}
	require.Equal(t, 4, started, "every call of the session, before and after the kill, is in the one task")
	require.Equal(t, 1, lost)
	require.Equal(t, 1, closed)
	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, srv.wait(t))
}
