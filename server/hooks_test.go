package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
)

// getJSON GETs path with the agents' token and decodes the answer.
func getJSON(t *testing.T, e *env, path string, status int, out any) {
	t.Helper()
	resp := rawGet(t, e, path, testToken)
	require.Equal(t, status, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
}

func (e *env) post(t *testing.T, path, body string, token bool) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token {
		req.Header.Set("Authorization", "Bearer "+testToken)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// TestHooks_ClaudeCodeSession drives Claude Code's HTTP hook and the
// command hook's envelope through the real server, every exchange checked
// against openapi.yaml.
func TestHooks_ClaudeCodeSession(t *testing.T) {
	e := sharedEnv(t)
	ws := t.TempDir()
	sid := "srv-" + uuid.NewString()
	ev := func(event string, extra string) string {
		return `{"session_id":"` + sid + `","cwd":"` + ws + `","hook_event_name":"` + event + `","permission_mode":"default"` + extra + `}`
	}
	status, body := e.post(t, "/v1/hooks/claude-code", ev("SessionStart", `,"source":"startup"`), true)
	require.Equal(t, 200, status, string(body))
	require.JSONEq(t, `{}`, string(body))

	// The destructive guard of the default policy denies, in Claude's words.
	status, body = e.post(t, "/v1/hooks/claude-code", ev("PreToolUse", `,"tool_name":"Bash","tool_input":{"command":"rm -rf / --no-preserve-root"},"tool_use_id":"toolu_1"`), true)
	require.Equal(t, 200, status, string(body))
	var deny struct {
		Out map[string]string `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal(body, &deny))
	require.Equal(t, "deny", deny.Out["permissionDecision"])
	require.NotEmpty(t, deny.Out["permissionDecisionReason"])

	// The command hook's envelope.
	status, body = e.post(t, "/v1/hooks/claude?format=command", ev("PreToolUse", `,"tool_name":"Bash","tool_input":{"command":"rm -rf ~"},"tool_use_id":"toolu_2"`), true)
	require.Equal(t, 200, status, string(body))
	var env struct {
		Body json.RawMessage `json:"body"`
		Exit int             `json:"exit"`
	}
	require.NoError(t, json.Unmarshal(body, &env))
	require.Equal(t, 2, env.Exit)

	before := e.records()
	for _, tc := range []struct {
		path, body string
		token      bool
		status     int
		code       string
	}{
		{"/v1/hooks/claude-code", ev("PreToolUse", `,"tool_name":"Bash","tool_input":{"command":"ls"}`), false, 401, "unauthorized"},
		{"/v1/hooks/claude-code", `{"session_id":`, true, 400, "malformed_json"},
		{"/v1/hooks/claude-code", `{"session_id":"` + sid + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("a", api.MaxHookBody) + `"}}`, true, 413, "body_too_large"},
		{"/v1/hooks/claude-code", ev("PreToolUse", `,"tool_input":{"command":"ls"}`), true, 400, "hook.missing_field"},
		{"/v1/hooks/claude-code", ev("PostToolUse", `,"tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_none","tool_response":"x"`), true, 409, "hook.no_pending_call"},
		{"/v1/hooks/windsurf", `{}`, true, 404, "hook.unknown_agent"},
	} {
		status, body := e.post(t, tc.path, tc.body, tc.token)
		require.Equal(t, tc.status, status, "%s: %s", tc.path, body)
		if tc.code != "" {
			var eb struct {
				Error struct{ Code string } `json:"error"`
			}
			require.NoError(t, json.Unmarshal(body, &eb))
			require.Equal(t, tc.code, eb.Error.Code)
		}
	}
	require.Equal(t, before, e.records(), "refused hook requests record nothing")

	var open api.HookSession
	getJSON(t, e, "/v1/hooks/claude/sessions/"+sid, http.StatusOK, &open)
	require.Equal(t, "open", open.State)
	var eb api.ErrorBody
	getJSON(t, e, "/v1/hooks/claude/sessions/nope", http.StatusNotFound, &eb)
	require.Equal(t, "hook.unknown_session", eb.Error.Code)

	status, body = e.post(t, "/v1/hooks/claude-code", ev("SessionEnd", `,"reason":"other"`), true)
	require.Equal(t, 200, status, string(body))
	require.Contains(t, string(body), "session certified")

	req, err := http.NewRequest(http.MethodGet, e.http.URL+"/v1/hooks/claude-code/sessions/"+sid, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var sess struct {
		State       string
		ChainID     string `json:"chain_id"`
		Certificate struct {
			CertificateID string `json:"certificate_id"`
		}
	}
	raw, _ := io.ReadAll(resp.Body)
	require.NoError(t, json.NewDecoder(bytes.NewReader(raw)).Decode(&sess), string(raw))
	require.Equal(t, "ended", sess.State)
	require.NotEmpty(t, sess.Certificate.CertificateID)
	// The certificate is the server's like any other.
	cert, err := e.client.Certificate(t.Context(), uuid.MustParse(sess.Certificate.CertificateID))
	require.NoError(t, err)
	require.Equal(t, sess.ChainID, cert.ChainID.String())
}
