package hookclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hookclient"
)

const claudePre = `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}`
const claudePost = `{"session_id":"s","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1","tool_response":"x"}`

// deadURL is a loopback address nothing listens on.
func deadURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

func run(t *testing.T, opt hookclient.Options, stdin string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := hookclient.Run(context.Background(), opt, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRun_SidecarDownBlocks(t *testing.T) {
	url := deadURL(t)
	code, out, errs := run(t, hookclient.Options{Agent: agents.Claude, URL: url}, claudePre)
	require.Equal(t, 2, code)
	require.Contains(t, errs, "gate unavailable")
	require.Contains(t, errs, "not a policy decision")
	require.Contains(t, errs, "cannot be reached")
	var body map[string]map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &body))
	require.Equal(t, "deny", body["hookSpecificOutput"]["permissionDecision"])

	// Every agent blocks in its own way.
	for agent, input := range map[agents.Agent]string{
		agents.Codex:  claudePre,
		agents.Gemini: `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
		agents.Cursor: `{"conversation_id":"c","hook_event_name":"beforeShellExecution","command":"ls","cwd":"/w"}`,
	} {
		code, _, errs := run(t, hookclient.Options{Agent: agent, URL: url}, input)
		require.Equal(t, 2, code, agent)
		require.Contains(t, errs, "gate unavailable", agent)
	}
	// Copilot CLI skips hooks that exit non-zero: it blocks with a deny on 0.
	code, out, _ = run(t, hookclient.Options{Agent: agents.Copilot, URL: url, Event: "preToolUse"}, `{"sessionId":"s","cwd":"/w","toolName":"bash","toolArgs":{"command":"ls"}}`)
	require.Equal(t, 0, code)
	require.Contains(t, out, `"permissionDecision":"deny"`)
	require.Contains(t, out, "gate unavailable")

	// A post-tool event cannot be blocked: a non-blocking error.
	code, out, errs = run(t, hookclient.Options{Agent: agents.Claude, URL: url}, claudePost)
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Contains(t, errs, "could not record the outcome of this tool call", "it says what happened")
	require.Contains(t, errs, "the call was not blocked")
	require.NotContains(t, errs, "is blocked")
}

func TestRun_TimeoutBlocks(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	code, _, errs := run(t, hookclient.Options{Agent: agents.Claude, URL: srv.URL, Timeout: 100 * time.Millisecond}, claudePre)
	require.Equal(t, 2, code)
	require.Contains(t, errs, "did not answer within 100ms")
}

func TestRun_BadAnswersBlock(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"401": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) },
		"500 error body": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			w.Write([]byte(`{"error":{"code":"x","message":"boom"}}`))
		},
		"not JSON":      func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) },
		"unknown field": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"body":null,"exit":0,"allow":true}`)) },
		"body a string": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"body":"allow","exit":0}`)) },
		"exit 7":        func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"body":{},"exit":7}`)) },
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			code, _, errs := run(t, hookclient.Options{Agent: agents.Claude, URL: srv.URL}, claudePre)
			require.Equal(t, 2, code)
			require.Contains(t, errs, "gate unavailable")
		})
	}
}

func TestRun_UnreadableInputBlocks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("an unreadable input is not sent")
	}))
	defer srv.Close()
	for _, in := range []string{"", "{", `{"session_id":"s","hook_event_name":"PreToolUse"}`} {
		code, out, errs := run(t, hookclient.Options{Agent: agents.Claude, URL: srv.URL}, in)
		require.Equal(t, 2, code, in)
		require.Contains(t, errs, "could not be read")
		require.Contains(t, out, `"hookEventName":"PreToolUse"`)
	}
	code, _, errs := run(t, hookclient.Options{Agent: "windsurf", URL: srv.URL}, claudePre)
	require.Equal(t, 2, code)
	require.Contains(t, errs, "unknown agent")
}

func TestRun_PassesTheAnswerThrough(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Write([]byte(`{"body":{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}},"exit":2,"stderr":"no"}`))
	}))
	defer srv.Close()
	code, out, errs := run(t, hookclient.Options{Agent: agents.Claude, URL: srv.URL, Token: "tok"}, claudePre)
	require.Equal(t, 2, code)
	require.Equal(t, "no\n", errs)
	require.JSONEq(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`, out)
	require.Equal(t, "Bearer tok", got.Header.Get("Authorization"))
	require.Equal(t, "/v1/hooks/claude", got.URL.Path)
	require.Equal(t, "command", got.URL.Query().Get("format"))
	require.Equal(t, "PreToolUse", got.URL.Query().Get("event"))
}
