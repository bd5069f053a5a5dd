package agents_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
)

// withMember adds a member to a JSON object's text, after its others.
func withMember(object, member string) []byte {
	return []byte(strings.TrimSuffix(object, "}") + "," + member + "}")
}

// TestDecode_AmbiguousInputIsRefused: a hook input JSON readers could read
// differently is refused with ErrAmbiguous — a key twice (top level or in
// the tool input), another case of a field the dialect reads, invalid
// UTF-8, an unpaired surrogate escape, a duplicate inside a tool input sent
// as a JSON string — while extra fields, even in another case than each
// other, stay accepted.
func TestDecode_AmbiguousInputIsRefused(t *testing.T) {
	d := claude(t)
	for name, in := range map[string][]byte{
		"tool_name twice":            withMember(preBash, `"tool_name":"Read"`),
		"session_id twice":           withMember(preBash, `"session_id":"s2"`),
		"a key twice in tool_input":  []byte(strings.Replace(preBash, `{"command":"ls"}`, `{"command":"ls","command":"rm -rf /"}`, 1)),
		"Tool_Name beside tool_name": withMember(preBash, `"Tool_Name":"Read"`),
		"TOOL_INPUT":                 withMember(preBash, `"TOOL_INPUT":{"command":"ls"}`),
		"Session_ID":                 withMember(preBash, `"Session_ID":"s2"`),
		"invalid UTF-8":              []byte(strings.Replace(preBash, `"ls"`, "\"l\xffs\"", 1)),
		"unpaired surrogate":         []byte(strings.Replace(preBash, `"ls"`, `"l\ud800s"`, 1)),
	} {
		_, err := d.Decode("", in)
		require.ErrorIs(t, err, agents.ErrAmbiguous, name)
		require.NotErrorIs(t, err, agents.ErrMalformed, name)
		require.Contains(t, err.Error(), "claude", name)
	}

	ev, err := d.Decode("", withMember(preBash, `"transcript_path":"/t","Transcript_Path":"/u","x_extra":{"a":1}`))
	require.NoError(t, err, "fields the dialect does not read are the agent's business")
	require.Equal(t, "Bash", ev.ToolName)

	// Copilot CLI's camelCase format sends its tool input as a JSON string.
	copilot, err := agents.Lookup(agents.Copilot)
	require.NoError(t, err)
	quoted := `{"sessionId":"s","cwd":"/w","toolName":"bash","toolArgs":"{\"command\":\"ls\",\"command\":\"rm -rf /\"}"}`
	_, err = copilot.Decode("preToolUse", []byte(quoted))
	require.ErrorIs(t, err, agents.ErrAmbiguous)
	ev, err = copilot.Decode("preToolUse", []byte(strings.Replace(quoted, `,\"command\":\"rm -rf /\"`, "", 1)))
	require.NoError(t, err)
	require.JSONEq(t, `{"command":"ls"}`, string(ev.ToolInput))
}

// TestDecode_EveryDialectRefusesAnotherCaseOfItsFields: for every agent,
// its pre-tool canary with a case variant of its session field, or that
// field twice, is ambiguous; the canary itself is not.
func TestDecode_EveryDialectRefusesAnotherCaseOfItsFields(t *testing.T) {
	for _, agent := range agents.Agents() {
		d, err := agents.Lookup(agent)
		require.NoError(t, err)
		in, err := d.CanaryInput(d.PreToolEvent(), "s", "/w")
		require.NoError(t, err)
		_, err = d.Decode("", in)
		require.NoError(t, err, agent)
		session := d.Formats[0].Fields.Session[0]
		for _, member := range []string{`"` + strings.ToUpper(session) + `":"s2"`, `"` + session + `":"s2"`} {
			_, err = d.Decode("", withMember(string(in), member))
			require.ErrorIs(t, err, agents.ErrAmbiguous, "%s: %s", agent, member)
		}
	}
}
