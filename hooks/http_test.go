package hooks_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/hooks"
)

func postJSON(t *testing.T, url string, body []byte) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

func TestHandler_ClaudeCodeHTTPHook(t *testing.T) {
	r := newRig(t, hooks.ApprovalAsk)
	srv := httptest.NewServer(hooks.Handler(r.svc))
	defer srv.Close()
	sid := "http-" + uuid.NewString()
	url := srv.URL + "/v1/hooks/claude-code"

	status, body := postJSON(t, url, claudeEvent(sid, r.ws, "SessionStart", map[string]any{"source": "startup"}))
	require.Equal(t, 200, status)
	require.JSONEq(t, `{}`, string(body))

	status, body = postJSON(t, url, claudeEvent(sid, r.ws, "PreToolUse", pre("Bash", "toolu_a", map[string]any{"command": "rm -rf /"})))
	require.Equal(t, 200, status)
	var deny struct {
		Out map[string]string `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal(body, &deny))
	require.Equal(t, "PreToolUse", deny.Out["hookEventName"])
	require.Equal(t, "deny", deny.Out["permissionDecision"])
	require.NotEmpty(t, deny.Out["permissionDecisionReason"])

	readme := filepath.Join(r.ws, "README.md")
	status, body = postJSON(t, url, claudeEvent(sid, r.ws, "PreToolUse", pre("Read", "toolu_b", map[string]any{"file_path": readme})))
	require.Equal(t, 200, status)
	require.JSONEq(t, `{}`, string(body), "allow is no opinion by default")

	// The command hook's envelope.
	status, body = postJSON(t, srv.URL+"/v1/hooks/claude?format=command", claudeEvent(sid, r.ws, "PreToolUse", pre("Bash", "toolu_c", map[string]any{"command": "rm -rf ~"})))
	require.Equal(t, 200, status)
	var env hooks.Envelope
	require.NoError(t, json.Unmarshal(body, &env))
	require.Equal(t, 2, env.Exit)
	require.NotEmpty(t, env.Stderr)
	require.Contains(t, string(env.Body), `"deny"`)

	// Refusals: a stable error body and a precise status.
	for _, tc := range []struct {
		url, body, code string
		status          int
	}{
		{url, `{"session_id":`, "hook.malformed", 400},
		{url, string(claudeEvent(sid, r.ws, "PreToolUse", map[string]any{"tool_input": map[string]any{}})), "hook.missing_field", 400},
		{url, string(claudeEvent(sid, r.ws, "PostToolUse", post("Read", "toolu_zz", map[string]any{}, "x"))), "hook.no_pending_call", 409},
		{srv.URL + "/v1/hooks/windsurf", `{}`, "hook.unknown_agent", 404},
		{url, `{"session_id":"` + sid + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("a", hooks.MaxBody) + `"}}`, "hook.too_large", 413},
	} {
		status, body := postJSON(t, tc.url, []byte(tc.body))
		require.Equal(t, tc.status, status, "%s: %s", tc.code, body)
		var eb hooks.ErrorBody
		require.NoError(t, json.Unmarshal(body, &eb))
		require.Equal(t, tc.code, eb.Error.Code)
		require.NotEmpty(t, eb.Error.Message)
	}

	resp, err := http.Get(srv.URL + "/v1/hooks/claude/sessions/" + sid)
	require.NoError(t, err)
	var open hooks.SessionBody
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&open))
	resp.Body.Close()
	require.Equal(t, "open", open.State)

	status, body = postJSON(t, url, claudeEvent(sid, r.ws, "SessionEnd", map[string]any{"reason": "other"}))
	require.Equal(t, 200, status)
	var notice map[string]string
	require.NoError(t, json.Unmarshal(body, &notice))
	require.Contains(t, notice["systemMessage"], "session certified")
	require.Contains(t, notice["systemMessage"], open.ChainID, "the user is told where the proof is")
	ended, ok := r.svc.Session("claude", sid)
	require.True(t, ok)
	require.NotNil(t, ended.Certificate, ended.CertifyError)

	resp, err = http.Get(srv.URL + "/v1/hooks/claude-code/sessions/" + sid)
	require.NoError(t, err)
	var got hooks.SessionBody
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	resp.Body.Close()
	require.Equal(t, "ended", got.State)
	require.Equal(t, open.ChainID, got.ChainID)
	require.Equal(t, ended.Certificate.CertificateID, got.Certificate.CertificateID)
	resp, err = http.Get(srv.URL + "/v1/hooks/claude/sessions/nope")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 404, resp.StatusCode)
}
