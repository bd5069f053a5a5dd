package agents_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
)

// TestDialect_CanaryInput_DecodesAsTheDestructiveCall: every pre-tool
// event of every dialect gets a canary its own decoder reads as a shell
// call of rm -rf /, and every session end has its closing input. The
// command hook's Peek names the event as Decode does, and the event it
// read translates to the same arguments.
func TestDialect_CanaryInput_DecodesAsTheDestructiveCall(t *testing.T) {
	for _, agent := range agents.Agents() {
		d, err := agents.Lookup(agent)
		require.NoError(t, err)
		for _, event := range d.EventNames() {
			if d.EventKind(event) != agents.KindPreTool {
				continue
			}
			in, err := d.CanaryInput(event, "s-1", "/work/p")
			require.NoError(t, err)
			ev, err := d.Decode(event, in)
			require.NoError(t, err, "%s %s: %s", agent, event, in)
			require.Equal(t, agents.KindPreTool, ev.Kind)
			require.Equal(t, "s-1", ev.SessionID)
			peeked, err := d.Peek(event, in)
			require.NoError(t, err)
			require.Equal(t, []string{ev.Name, ev.SessionID, ev.ToolName, ev.ToolUseID, string(ev.Kind)},
				[]string{peeked.Name, peeked.SessionID, peeked.ToolName, peeked.ToolUseID, string(peeked.Kind)})
			calls, err := d.Request(ev, nil)
			if err != nil {
				continue // beforeReadFile / MCP events carry no shell command
			}
			fromPeek, err := d.Request(peeked, nil)
			require.NoError(t, err)
			require.Equal(t, calls[0].Arguments.Digest, fromPeek[0].Arguments.Digest)
			if calls[0].Tool == "bash" {
				require.JSONEq(t, `{"command":"rm -rf /"}`, string(calls[0].Arguments.Canonical), "%s %s", agent, event)
			}
		}
		_, err = d.CanaryInput("NoSuchEvent", "s", "/w")
		require.Error(t, err)
	}
}

func TestDialect_Blocks_InEachAgentsShape(t *testing.T) {
	for _, c := range []struct {
		agent  agents.Agent
		exit   int
		stdout string
		want   bool
	}{
		{agents.Claude, 2, "", true},
		{agents.Claude, 0, `{"hookSpecificOutput":{"permissionDecision":"deny"}}`, true},
		{agents.Claude, 0, `{"hookSpecificOutput":{"permissionDecision":"ask"}}`, false},
		{agents.Claude, 0, `{}`, false},
		{agents.Claude, 1, ``, false},
		{agents.Codex, 2, "", true},
		{agents.Gemini, 127, "", true},
		{agents.Gemini, 0, `{"decision":"deny"}`, true},
		{agents.Gemini, 1, "", false},
		{agents.Cursor, 0, `{"permission":"deny"}`, true},
		{agents.Cursor, 0, `{"permission":"allow"}`, false},
		{agents.Copilot, 0, `{"permissionDecision":"deny"}`, true},
		{agents.Copilot, 2, `{"permissionDecision":"deny"}`, false},
	} {
		d, err := agents.Lookup(c.agent)
		require.NoError(t, err)
		require.Equal(t, c.want, d.Blocks(c.exit, []byte(c.stdout)), "%s exit %d %s", c.agent, c.exit, c.stdout)
	}
}
