package agents_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/governance"
)

// fixture is one agent's documented events, recorded from its
// documentation (testdata/<agent>.json), with what each must become.
type fixture struct {
	Agent  string            `json:"agent"`
	Source string            `json:"source"`
	Exists map[string]string `json:"exists"` // path → "file" | "dir": the host facts
	Cases  []fixtureCase     `json:"cases"`
}

type fixtureCase struct {
	Name         string          `json:"name"`
	Event        string          `json:"event"` // the --event hint, for payloads without a name
	Input        json.RawMessage `json:"input"`
	Kind         agents.Kind     `json:"kind"`
	Cwd          string          `json:"cwd"`
	Calls        []expectedCall  `json:"calls"`
	Response     bool            `json:"response"`
	FailureClass string          `json:"failure_class"`
}

type expectedCall struct {
	Tool      string            `json:"tool"`
	Operation string            `json:"operation"`
	Args      map[string]any    `json:"args"`
	Absent    []string          `json:"absent"`
	Meta      map[string]string `json:"meta"`
}

// facts is the fixture's view of the host's filesystem.
type facts map[string]string

func (f facts) Stat(path string) (bool, bool) {
	kind, ok := f[path]
	return ok, kind == "dir"
}

func loadFixture(t *testing.T, agent agents.Agent) fixture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", string(agent)+".json"))
	require.NoError(t, err)
	var fx fixture
	require.NoError(t, json.Unmarshal(raw, &fx))
	require.Equal(t, string(agent), fx.Agent)
	require.NotEmpty(t, fx.Cases)
	return fx
}

// TestFixtures_EveryDocumentedEvent decodes every recorded payload of the
// five agents, checks the govhost request it maps to, and checks that
// every answer govhost can give is valid in that agent's dialect.
func TestFixtures_EveryDocumentedEvent(t *testing.T) {
	for _, agent := range agents.Agents() {
		t.Run(string(agent), func(t *testing.T) {
			d, err := agents.Lookup(agent)
			require.NoError(t, err)
			fx := loadFixture(t, agent)
			covered := map[string]bool{}
			for _, c := range fx.Cases {
				t.Run(c.Name, func(t *testing.T) {
					ev, err := d.Decode(c.Event, c.Input)
					require.NoError(t, err)
					covered[ev.Name] = true
					require.Equal(t, c.Kind, ev.Kind, "event %s", ev.Name)
					if c.Cwd != "" {
						require.Equal(t, c.Cwd, ev.Cwd)
					}
					if ev.Kind != agents.KindObserve {
						require.NotEmpty(t, ev.SessionID, "a governed event names its session")
					}
					require.Equal(t, c.FailureClass, ev.FailureClass)
					require.Equal(t, c.Response, agents.ResponseDigest(ev) != "", "a response digest exactly when the event reports a result")
					if len(c.Calls) > 0 {
						calls, err := d.Request(ev, facts(fx.Exists))
						require.NoError(t, err)
						checkCalls(t, c.Calls, calls, ev)
						key, err := d.CorrelationKey(ev, calls)
						require.NoError(t, err)
						require.Equal(t, correlationKey(t, d, ev), key, "the pre-tool key is the one a post-tool event with the same input gets")
					} else {
						require.Contains(t, []agents.Kind{agents.KindObserve, agents.KindSessionStart, agents.KindSessionEnd}, ev.Kind,
							"a tool event's fixture must say which calls it maps to")
					}
					checkAnswers(t, d, ev)
				})
			}
			var missing []string
			for _, name := range d.EventNames() {
				if !covered[name] {
					missing = append(missing, name)
				}
			}
			sort.Strings(missing)
			require.Empty(t, missing, "documented events of %s without a fixture", agent)
		})
	}
}

func checkCalls(t *testing.T, want []expectedCall, got []agents.Request, ev agents.Event) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		require.Equal(t, w.Tool, g.Tool, "call %d tool", i)
		require.Equal(t, w.Operation, g.Operation, "call %d operation", i)
		require.Equal(t, ev.Cwd, g.Cwd)
		require.Equal(t, ev.SessionID, g.RunID)
		require.Equal(t, ev.ToolUseID, g.ToolCallID)
		args, err := governance.ParseArguments(g.Arguments.Canonical)
		require.NoError(t, err, "the arguments are a governed argument object")
		require.Equal(t, args.Digest, g.Arguments.Digest)
		require.Equal(t, args.Canonical, g.Arguments.Canonical)
		var plain map[string]any
		require.NoError(t, json.Unmarshal(g.Arguments.Canonical, &plain))
		for k, v := range w.Args {
			require.Contains(t, plain, k, "call %d argument %s", i, k)
			require.Equal(t, v, plain[k], "call %d argument %s", i, k)
		}
		for _, k := range w.Absent {
			require.NotContains(t, args.Value, k, "call %d argument %s must not be passed on", i, k)
		}
		for k, v := range w.Meta {
			require.Equal(t, v, g.Metadata[k], "call %d metadata %s", i, k)
		}
		require.Equal(t, string(ev.Agent), g.Metadata["agent"])
	}
}

// checkAnswers renders allow, deny and ask (with and without an explicit
// allow) and checks each against the agent's documented answer schema.
func checkAnswers(t *testing.T, d *agents.Dialect, ev agents.Event) {
	t.Helper()
	const msg = "permission denied: bash is not allowed for this command"
	for _, explicit := range []bool{false, true} {
		opt := agents.AnswerOptions{ExplicitAllow: explicit}
		for _, decision := range []agents.Decision{agents.Allow, agents.Deny, agents.Ask} {
			a := d.Answer(ev, agents.Verdict{Decision: decision, ReasonCode: "x.y", Message: msg}, opt)
			var body map[string]any
			require.NoError(t, json.Unmarshal(a.Body, &body), "the answer is one JSON object: %q", a.Body)
			if ev.Kind != agents.KindPreTool {
				require.Empty(t, body, "no opinion on %s", ev.Name)
				require.Zero(t, a.Exit)
				continue
			}
			effective := decision
			if decision == agents.Ask && !d.CanAsk {
				effective = agents.Deny
			}
			if effective == agents.Allow && (!explicit || !d.ExplicitAllow) {
				require.Empty(t, body, "an allow is no opinion")
				require.Zero(t, a.Exit)
				require.False(t, a.Blocks)
				continue
			}
			validAnswer(t, d, ev, body, effective, msg)
			if effective == agents.Deny {
				require.True(t, a.Blocks)
				require.Equal(t, d.BlockExit, a.Exit)
				if a.Exit == 2 {
					require.Equal(t, msg, a.Stderr, "exit status 2 blocks with the reason on stderr")
				}
			} else {
				require.Zero(t, a.Exit)
				require.False(t, a.Blocks)
			}
		}
	}
	// The gate cannot answer: block, and say so.
	u := d.Unavailable(ev, "connection refused")
	if ev.Kind == agents.KindPreTool {
		require.True(t, u.Blocks)
		require.Equal(t, d.BlockExit, u.Exit)
		require.Contains(t, u.Stderr, "gate unavailable")
		require.Contains(t, u.Stderr, "not a policy decision")
		var body map[string]any
		require.NoError(t, json.Unmarshal(u.Body, &body))
		validAnswer(t, d, ev, body, agents.Deny, u.Stderr)
	} else {
		require.False(t, u.Blocks)
		require.Equal(t, 1, u.Exit, "a non-blocking error outside pre-tool events")
		require.NotContains(t, u.Stderr, "blocked because", "it says what happened: nothing was blocked")
		require.Regexp(t, "not blocked|nothing was blocked", u.Stderr)
		require.Contains(t, u.Stderr, "connection refused")
	}
}

// validAnswer is each agent's documented answer schema.
func validAnswer(t *testing.T, d *agents.Dialect, ev agents.Event, body map[string]any, decision agents.Decision, msg string) {
	t.Helper()
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	switch d.Agent {
	case agents.Claude, agents.Codex:
		require.Equal(t, []string{"hookSpecificOutput"}, keys(body))
		out, ok := body["hookSpecificOutput"].(map[string]any)
		require.True(t, ok)
		require.Equal(t, ev.Name, out["hookEventName"])
		require.Equal(t, string(decision), out["permissionDecision"])
		require.Equal(t, msg, out["permissionDecisionReason"])
		if d.Agent == agents.Codex {
			require.Equal(t, "deny", out["permissionDecision"], "Codex honours only deny")
		}
	case agents.Gemini:
		require.Contains(t, []any{"allow", "deny"}, body["decision"])
		require.Equal(t, string(decision), body["decision"])
		if decision == agents.Deny {
			require.Equal(t, msg, body["reason"], "a deny's reason is required")
		}
	case agents.Cursor:
		require.Equal(t, string(decision), body["permission"])
		for _, k := range keys(body) {
			require.Contains(t, []string{"permission", "user_message", "agent_message"}, k)
		}
		if decision == agents.Deny {
			require.Equal(t, msg, body["agent_message"], "the model sees the gate's message")
			require.Equal(t, msg, body["user_message"])
		}
	case agents.Copilot:
		require.Equal(t, string(decision), body["permissionDecision"])
		for _, k := range keys(body) {
			require.Contains(t, []string{"permissionDecision", "permissionDecisionReason"}, k)
		}
		if decision == agents.Deny {
			require.Equal(t, msg, body["permissionDecisionReason"], "required when the decision is deny")
		}
	default:
		t.Fatalf("no answer schema for %s", d.Agent)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
