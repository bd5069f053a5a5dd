package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/hookclient"
	"github.com/govhost/govhost/policy/profiles"
)

// argumentWork is what one request cost in governance's argument entry
// points: decodes (governance.DecodeArguments) and canonicalisations with
// their hash (governance.NewArguments).
type argumentWork struct{ decodes, canonicalisations int64 }

// counted runs send and returns the argument work it did in this process:
// the server's and, for the command hook, the client's.
func counted(w *governance.ArgumentWork, send func()) argumentWork {
	d0, c0 := w.Counts()
	send()
	d1, c1 := w.Counts()
	return argumentWork{d1 - d0, c1 - c0}
}

// agentPost sends body to path with the agents' token and returns the
// status and the answer.
func (e *env) agentPost(t *testing.T, path string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testAgentToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// TestArguments_ParsedOncePerRequest counts, in governance's one decode and
// one canonicalisation of a call's arguments, what each way in costs on the
// real server under the default coding-agent policy: an HTTP authorize, and
// a pre-tool event of each of the five agents over its HTTP hook route and
// through the command hook (hookclient in this process, so its work counts
// too). Each decodes its arguments once and canonicalises and hashes them
// once; a second parse anywhere on the way (the hook layer re-reading the
// tool input, the correlation key hashing it again, the controller parsing
// what the hook already parsed, the command hook decoding the input before
// sending it) fails it.
func TestArguments_ParsedOncePerRequest(t *testing.T) {
	e := openEnvPolicy(t, true, "", profiles.Balanced)
	defer e.close()
	ws := t.TempDir()
	readme := filepath.Join(ws, "README.md")
	require.NoError(t, os.WriteFile(readme, []byte("# shop\n"), 0o644))
	work, stop := governance.CountArgumentWork()
	defer stop()
	once := argumentWork{decodes: 1, canonicalisations: 1}

	t.Run("http authorize", func(t *testing.T) {
		task, err := e.agent.OpenTask(context.Background(), api.OpenTaskRequest{Workspace: ws})
		require.NoError(t, err)
		path := "/v1/tasks/" + task.TaskID.String() + "/authorize"
		for _, tc := range []struct {
			name, body, decision string
		}{
			{"allowed read", `{"tool":"read","operation":"read_file","arguments":{"path":` + quote(readme) + `},"cwd":` + quote(ws) + `}`, api.DecisionAllow},
			{"denied rm -rf /", `{"tool":"bash","operation":"execute_command","arguments":{"command":"rm -rf /"},"cwd":` + quote(ws) + `}`, api.DecisionDeny},
		} {
			var res api.AuthorizeResult
			got := counted(work, func() {
				status, body := e.agentPost(t, path, []byte(tc.body))
				require.Equal(t, http.StatusOK, status, string(body))
				require.NoError(t, json.Unmarshal(body, &res))
			})
			require.Equal(t, tc.decision, res.Decision, tc.name)
			require.Equal(t, once, got, "%s: decodes and canonicalisations of the arguments", tc.name)
		}
	})

	for _, agent := range agents.Agents() {
		d, err := agents.Lookup(agent)
		require.NoError(t, err)
		for _, transport := range []string{"http", "command"} {
			t.Run(string(agent)+"/"+transport, func(t *testing.T) {
				// send answers one pre-tool input through the transport.
				send := func(event string, body []byte) (exit int, answer []byte) {
					if transport == "command" {
						var out, errs bytes.Buffer
						exit = hookclient.Run(context.Background(), hookclient.Options{Agent: agent, Event: event, URL: e.http.URL, Token: testAgentToken},
							bytes.NewReader(body), &out, &errs)
						return exit, bytes.TrimSpace(out.Bytes())
					}
					path := "/v1/hooks/" + string(agent) + "?format=command"
					if event != "" {
						path += "&event=" + event
					}
					status, raw := e.agentPost(t, path, body)
					require.Equal(t, http.StatusOK, status, string(raw))
					var env api.HookEnvelope
					require.NoError(t, json.Unmarshal(raw, &env))
					return env.Exit, env.Body
				}
				// An allowed read inside the workspace, in every payload
				// format of the agent.
				for _, in := range readInputs(agent, "count-"+transport+"-"+uuid.NewString(), ws, readme) {
					var exit int
					var answer []byte
					got := counted(work, func() { exit, answer = send(in.event, in.body) })
					require.False(t, d.Blocks(exit, answer), "%s: a read inside the workspace is not blocked: %s", in.format, answer)
					require.Equal(t, once, got, "%s %s: decodes and canonicalisations of the arguments", agent, in.format)
				}
				// The canary (rm -rf /) through every documented pre-tool
				// event, each in a session of its own.
				for _, event := range d.EventNames() {
					if d.EventKind(event) != agents.KindPreTool {
						continue
					}
					in, err := d.CanaryInput(event, "canary-"+transport+"-"+uuid.NewString(), ws)
					require.NoError(t, err)
					hint := ""
					if agent == agents.Copilot {
						hint = event // the camelCase format names its event only this way
					}
					got := counted(work, func() { send(hint, in) })
					require.Equal(t, once, got, "%s %s: decodes and canonicalisations of the arguments", agent, event)
				}
			})
		}
	}

	t.Run("codex apply_patch", func(t *testing.T) {
		// One decode of the tool input; one canonicalisation for each of
		// the governed calls a patch asks for (one per file it names).
		patch := "*** Begin Patch\n*** Add File: notes.md\n+hi\n*** Update File: README.md\n@@\n-# shop\n+# Shop\n*** End Patch\n"
		in, err := json.Marshal(map[string]any{"session_id": "patch-" + uuid.NewString(), "cwd": ws, "hook_event_name": "PreToolUse",
			"tool_name": "apply_patch", "tool_use_id": "call_1", "tool_input": map[string]any{"command": patch}})
		require.NoError(t, err)
		got := counted(work, func() {
			status, body := e.agentPost(t, "/v1/hooks/codex?format=command", in)
			require.Equal(t, http.StatusOK, status, string(body))
		})
		require.Equal(t, argumentWork{decodes: 1, canonicalisations: 2}, got)
	})
}

// preToolInput is one pre-tool hook input and the event name a transport
// passes with it (Copilot CLI's camelCase payloads carry none).
type preToolInput struct {
	format, event string
	body          []byte
}

// readInputs are pre-tool inputs asking agent's read tool for file, one
// per payload format of the agent's documented contract.
func readInputs(agent agents.Agent, session, cwd, file string) []preToolInput {
	body := func(m map[string]any) []byte {
		b, _ := json.Marshal(m)
		return b
	}
	id := fmt.Sprintf("tu_%s", uuid.NewString())
	switch agent {
	case agents.Claude, agents.Codex:
		return []preToolInput{{format: "PreToolUse", body: body(map[string]any{"session_id": session, "cwd": cwd, "hook_event_name": "PreToolUse",
			"permission_mode": "default", "tool_name": "Read", "tool_input": map[string]any{"file_path": file}, "tool_use_id": id})}}
	case agents.Gemini:
		return []preToolInput{{format: "BeforeTool", body: body(map[string]any{"session_id": session, "cwd": cwd, "hook_event_name": "BeforeTool",
			"timestamp": "2026-12-06T01:00:00.000Z", "tool_name": "read_file", "tool_input": map[string]any{"file_path": file}})}}
	case agents.Cursor:
		return []preToolInput{{format: "preToolUse", body: body(map[string]any{"conversation_id": session, "generation_id": "g1", "hook_event_name": "preToolUse",
			"workspace_roots": []string{cwd}, "cwd": cwd, "tool_name": "Read", "tool_input": map[string]any{"file_path": file}, "tool_use_id": id})}}
	case agents.Copilot:
		return []preToolInput{
			{format: "camelCase", event: "preToolUse", body: body(map[string]any{"sessionId": session, "timestamp": 1764982800000, "cwd": cwd,
				"toolName": "view", "toolArgs": map[string]any{"path": file}})},
			{format: "camelCase, toolArgs as a JSON string", event: "preToolUse", body: body(map[string]any{"sessionId": session + "-s", "timestamp": 1764982800000, "cwd": cwd,
				"toolName": "view", "toolArgs": string(body(map[string]any{"path": file}))})},
			{format: "vscode", body: body(map[string]any{"session_id": session + "-v", "cwd": cwd, "hook_event_name": "PreToolUse",
				"tool_name": "view", "tool_input": map[string]any{"path": file}})},
		}
	}
	panic("no read input for " + agent)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestHooks_AmbiguousToolInputIsRefusedBeforeAnything: a tool input JSON
// readers could read differently (an unpaired surrogate escape, a key
// twice) is refused where the sidecar reads the hook input, before any
// session is opened or record appended: 400 ambiguous_json over the HTTP
// hook route, and a block through the command hook, which only peeks at
// its input and reports the sidecar's refusal.
func TestHooks_AmbiguousToolInputIsRefusedBeforeAnything(t *testing.T) {
	e := sharedEnv(t)
	ws := t.TempDir()
	for name, input := range map[string]string{
		"unpaired surrogate": `{"command":"echo \ud800"}`,
		"key twice":          `{"command":"ls","command":"rm -rf /"}`,
	} {
		t.Run(name, func(t *testing.T) {
			in := func(id string) []byte {
				return []byte(`{"session_id":"ambiguous-` + uuid.NewString() + `","cwd":` + quote(ws) + `,"hook_event_name":"PreToolUse","tool_name":"Bash",` +
					`"tool_input":` + input + `,"tool_use_id":"` + id + `"}`)
			}
			before := e.records()
			status, body := e.agentPost(t, "/v1/hooks/claude?format=command", in("toolu_1"))
			require.Equal(t, http.StatusBadRequest, status, string(body))
			require.Equal(t, "ambiguous_json", errorCode(t, body))

			var out, errs bytes.Buffer
			exit := hookclient.Run(context.Background(), hookclient.Options{Agent: agents.Claude, URL: e.http.URL, Token: testAgentToken},
				bytes.NewReader(in("toolu_2")), &out, &errs)
			require.Equal(t, 2, exit, "the command hook blocks: %s", errs.String())
			require.Contains(t, errs.String(), "ambiguous_json")
			require.Equal(t, before, e.records(), "nothing is appended for an input that cannot be read one way")
		})
	}
}
