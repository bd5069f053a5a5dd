package agents_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
)

func claude(t *testing.T) *agents.Dialect {
	d, err := agents.Lookup(agents.Claude)
	require.NoError(t, err)
	return d
}

const preBash = `{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`

func TestDecode_UnknownFieldsAreAccepted(t *testing.T) {
	d := claude(t)
	plain, err := d.Decode("", []byte(preBash))
	require.NoError(t, err)
	extended := `{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1",` +
		`"effort":{"level":"high"},"agent_id":"a1","agent_type":"Explore","a_field_from_2027":[1,{"x":null}],"prompt_id":"p"}`
	ev, err := d.Decode("", []byte(extended))
	require.NoError(t, err)
	require.Equal(t, plain.Kind, ev.Kind)
	require.Equal(t, plain.ToolName, ev.ToolName)
	require.JSONEq(t, string(plain.ToolInput), string(ev.ToolInput))
	require.Equal(t, correlationKey(t, d, plain), correlationKey(t, d, ev))
}

func TestDecode_UnknownEventIsObserved(t *testing.T) {
	for _, agent := range agents.Agents() {
		d, err := agents.Lookup(agent)
		require.NoError(t, err)
		ev, err := d.Decode("", []byte(`{"hook_event_name":"SomethingNew","session_id":"s","sessionId":"s","conversation_id":"c"}`))
		require.NoError(t, err, agent)
		require.Equal(t, agents.KindObserve, ev.Kind)
		require.JSONEq(t, "{}", string(d.NoOpinion().Body))
	}
}

// TestDecode_UnknownEventAskingAboutAToolFailsClosed: an undocumented
// event name (a typo, a newer agent) on a payload that names a tool and
// its input, with no response, is governed as a pre-tool event; the same
// with a response stays observed.
func TestDecode_UnknownEventAskingAboutAToolFailsClosed(t *testing.T) {
	for _, agent := range agents.Agents() {
		d, err := agents.Lookup(agent)
		require.NoError(t, err)
		in, err := d.CanaryInput(d.PreToolEvent(), "s", "/w")
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(in, &m))
		m["hook_event_name"] = "PreToolUze"
		typo, _ := json.Marshal(m)
		ev, err := d.Decode("", typo)
		require.NoError(t, err, agent)
		require.Equal(t, agents.KindPreTool, ev.Kind, "%s: %s", agent, typo)
		calls, err := d.Request(ev, nil)
		require.NoError(t, err)
		require.JSONEq(t, `{"command":"rm -rf /"}`, string(calls[0].Arguments.Canonical))
		require.True(t, d.Answer(ev, agents.Verdict{Decision: agents.Deny, Message: "no"}, agents.AnswerOptions{}).Blocks)

		for _, k := range []string{"tool_response", "tool_result", "toolResult", "tool_output"} {
			m[k] = map[string]any{"ok": true}
		}
		after, _ := json.Marshal(m)
		ev, err = d.Decode("", after)
		require.NoError(t, err, agent)
		require.Equal(t, agents.KindObserve, ev.Kind, "%s: a payload reporting a result is not a question", agent)
	}
}

func TestDecode_Malformed(t *testing.T) {
	d := claude(t)
	for name, body := range map[string]string{
		"empty":                              ``,
		"whitespace":                         "  \n",
		"array":                              `[]`,
		"string":                             `"PreToolUse"`,
		"null":                               `null`,
		"truncated":                          `{"session_id":"s1","hook_event_name":"PreToolUse"`,
		"two documents":                      `{} {}`,
		"tool_input a number":                `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":7}`,
		"tool_input a list":                  `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":["ls"]}`,
		"tool_name a number":                 `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":3,"tool_input":{}}`,
		"session_id a bool":                  `{"session_id":true,"hook_event_name":"PreToolUse","tool_name":"Bash"}`,
		"event name a list":                  `{"session_id":"s1","hook_event_name":["PreToolUse"]}`,
		"tool_input bad text":                `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"{not json"}`,
		"tool_input a string holding a list": `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"[\"ls\"]"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := d.Decode("", []byte(body))
			require.Error(t, err)
			require.True(t, errors.Is(err, agents.ErrMalformed), "%v", err)
			var me *agents.MalformedError
			require.True(t, errors.As(fmt.Errorf("wrapped: %w", err), &me))
			require.Equal(t, agents.Claude, me.Agent)
			require.Contains(t, err.Error(), "claude")
			_, err = d.Peek("", []byte(body))
			require.True(t, errors.Is(err, agents.ErrMalformed), "Peek refuses what Decode refuses: %v", err)
		})
	}
}

func TestDecode_MissingFields(t *testing.T) {
	d := claude(t)
	for name, tc := range map[string]struct{ body, field string }{
		"tool_name":      {`{"session_id":"s1","hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`, "tool_name"},
		"empty tool":     {`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"","tool_input":{}}`, "tool_name"},
		"post tool_name": {`{"session_id":"s1","hook_event_name":"PostToolUse","tool_response":{}}`, "tool_name"},
		"session":        {`{"hook_event_name":"PreToolUse","tool_name":"Bash"}`, "session_id"},
		"event name":     {`{"session_id":"s1","tool_name":"Bash"}`, "hook_event_name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := d.Decode("", []byte(tc.body))
			require.True(t, errors.Is(err, agents.ErrMissingField), "%v", err)
			var mf *agents.MissingFieldError
			require.True(t, errors.As(err, &mf))
			require.Equal(t, tc.field, mf.Field)
			require.Contains(t, err.Error(), tc.field)
		})
	}
	// Copilot's camelCase payloads name no event: without --event there is
	// nothing to go on.
	cp, err := agents.Lookup(agents.Copilot)
	require.NoError(t, err)
	_, err = cp.Decode("", []byte(`{"sessionId":"s","cwd":"/w","toolName":"bash","toolArgs":{"command":"ls"}}`))
	require.True(t, errors.Is(err, agents.ErrMissingField), "%v", err)
	ev, err := cp.Decode("preToolUse", []byte(`{"sessionId":"s","cwd":"/w","toolName":"bash","toolArgs":{"command":"ls"}}`))
	require.NoError(t, err)
	require.Equal(t, agents.KindPreTool, ev.Kind)
}

func TestLookup_UnknownAgent(t *testing.T) {
	_, err := agents.Lookup("windsurf")
	require.True(t, errors.Is(err, agents.ErrUnknownAgent))
	require.Contains(t, err.Error(), "windsurf")
}

func TestRequest_WriteNeedsHostFacts(t *testing.T) {
	d := claude(t)
	ev, err := d.Decode("", []byte(`{"session_id":"s1","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"a.txt","content":"x"}}`))
	require.NoError(t, err)
	_, err = d.Request(ev, nil)
	require.ErrorIs(t, err, agents.ErrNoHostFacts)
	// A relative path is joined to the session's cwd before the host is asked.
	calls, err := d.Request(ev, facts{"/w/a.txt": "file"})
	require.NoError(t, err)
	require.Equal(t, "overwrite_file", calls[0].Operation)
}

func TestRequest_PathAliasesGiveOnePath(t *testing.T) {
	g, err := agents.Lookup(agents.Gemini)
	require.NoError(t, err)
	ev, err := g.Decode("", []byte(`{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"glob","tool_input":{"path":"/w/b","pattern":"*","dir_path":"/w/a"}}`))
	require.NoError(t, err)
	calls, err := g.Request(ev, facts{})
	require.NoError(t, err)
	var args map[string]any
	require.NoError(t, json.Unmarshal(calls[0].Arguments.Canonical, &args))
	require.Equal(t, map[string]any{"path": "/w/a", "pattern": "*"}, args, "the first alias wins; the others are dropped so a gate sees one path")
	// Key order is the agent's.
	require.Equal(t, []string{"pattern", "path"}, calls[0].Arguments.Order)
}

func TestPatchFiles(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** Delete File: c.go\r\n*** Add File: d/e.md\n+hi\n*** End Patch"
	require.Equal(t, []agents.PatchFile{
		{Action: agents.PatchUpdate, Path: "a.go"},
		{Action: agents.PatchMoveTo, Path: "b.go"},
		{Action: agents.PatchDelete, Path: "c.go"},
		{Action: agents.PatchAdd, Path: "d/e.md"},
	}, agents.PatchFiles(patch))
	require.Empty(t, agents.PatchFiles("no headers here"))

	// A patch that names no file is still governed: one patch call with no
	// path, which the path gate denies.
	d, err := agents.Lookup(agents.Codex)
	require.NoError(t, err)
	ev, err := d.Decode("", []byte(`{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_use_id":"c","tool_input":{"command":"garbage"}}`))
	require.NoError(t, err)
	calls, err := d.Request(ev, facts{})
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.Equal(t, "patch", calls[0].Tool)
	require.JSONEq(t, `{"patch":"garbage"}`, string(calls[0].Arguments.Canonical))
}

func TestMCPToolID(t *testing.T) {
	require.Equal(t, "mcp__memory__create", agents.MCPToolID("memory", "create"))
	require.Equal(t, "mcp__unnamed__create", agents.MCPToolID("", "create"))
	d := claude(t)
	for _, name := range []string{"mcp__", "mcp____x", "mcp__server__", "mcp__justserver"} {
		ev, err := d.Decode("", []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"`+name+`","tool_input":{}}`))
		require.NoError(t, err)
		calls, err := d.Request(ev, facts{})
		require.NoError(t, err)
		require.Equal(t, name, calls[0].Tool, "a malformed MCP name keeps its own name")
		require.Empty(t, calls[0].Metadata["mcp_server"])
	}
}

func TestCorrelationKey(t *testing.T) {
	d := claude(t)
	withID, err := d.Decode("", []byte(preBash))
	require.NoError(t, err)
	require.Equal(t, "id:toolu_1", correlationKey(t, d, withID))

	g, err := agents.Lookup(agents.Gemini)
	require.NoError(t, err)
	before, err := g.Decode("", []byte(`{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":"."}}`))
	require.NoError(t, err)
	after, err := g.Decode("", []byte(`{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"dir_path":".","command":"ls"},"tool_response":{"llmContent":"x"}}`))
	require.NoError(t, err)
	require.Equal(t, correlationKey(t, g, before), correlationKey(t, g, after), "key order does not matter")
	// The pre-tool event's key, from the calls it was authorized with, is
	// the post-tool event's, which translates its own input.
	calls, err := g.Request(before, facts{})
	require.NoError(t, err)
	pre, err := g.CorrelationKey(before, calls)
	require.NoError(t, err)
	require.Equal(t, pre, correlationKey(t, g, after))
	other, err := g.Decode("", []byte(`{"session_id":"s","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"ls -a"}}`))
	require.NoError(t, err)
	require.NotEqual(t, correlationKey(t, g, before), correlationKey(t, g, other))
}

// correlationKey is a post-tool event's key: the event's own translation.
func correlationKey(t *testing.T, d *agents.Dialect, ev agents.Event) string {
	t.Helper()
	key, err := d.CorrelationKey(ev, nil)
	require.NoError(t, err)
	return key
}

func TestResponseDigest_NeverTheResponse(t *testing.T) {
	d := claude(t)
	ev, err := d.Decode("", []byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"cat secret"},"tool_response":{"stdout":"hunter2","took":1.5}}`))
	require.NoError(t, err)
	digest := agents.ResponseDigest(ev)
	require.Len(t, digest, 64)
	require.NotContains(t, digest, "hunter2")
	same, err := d.Decode("", []byte(`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"cat secret"},"tool_response":{"took":1.5, "stdout":"hunter2"}}`))
	require.NoError(t, err)
	require.Equal(t, digest, agents.ResponseDigest(same), "the digest is over a stable form")
}

func TestPending_ReplayAndUnmatched(t *testing.T) {
	p := agents.NewPending[string]()
	require.NoError(t, p.Claim("id:toolu_1"))
	require.ErrorIs(t, p.Claim("id:toolu_1"), agents.ErrReplayedToolUse)
	p.Hold("id:toolu_1", "permit-1")
	_, err := p.Take("id:toolu_2")
	require.ErrorIs(t, err, agents.ErrNoPending)
	got, err := p.Take("id:toolu_1")
	require.NoError(t, err)
	require.Equal(t, "permit-1", got)
	_, err = p.Take("id:toolu_1")
	require.ErrorIs(t, err, agents.ErrNoPending, "a permit is taken once")
	require.ErrorIs(t, p.Claim("id:toolu_1"), agents.ErrReplayedToolUse, "an id stays used after completion")

	// Input keys queue: the same call twice is two calls.
	require.NoError(t, p.Claim("input:k"))
	require.NoError(t, p.Claim("input:k"))
	p.Hold("input:k", "a")
	p.Hold("input:k", "b")
	p.Hold("id:z", "c")
	first, err := p.Take("input:k")
	require.NoError(t, err)
	require.Equal(t, "a", first)
	require.Equal(t, 2, p.Len())
	require.Equal(t, []string{"b", "c"}, p.Drain(), "oldest first")
	require.Zero(t, p.Len())
}

func TestPending_ConcurrentClaimsOfOneIDAdmitOne(t *testing.T) {
	p := agents.NewPending[int]()
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.Claim("id:same") == nil {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, admitted)
}
