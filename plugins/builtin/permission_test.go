package builtin_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
)

// The permission module's own promises beyond its case table
// (plugins/permission/testdata/cases.json, TestBuiltin_TablesThroughWasm)
// and its configuration-error texts (config_errors.json, make
// plugins-test): the tests of the Go gate it replaced, asked of the module.

// TestPermission_ReasonTexts: the verdicts of each family, field for
// field: LionAGI's reasons as detail, AgentLane's texts as message and
// deny_message.
func TestPermission_ReasonTexts(t *testing.T) {
	m := newModuleHost(t)
	for _, tc := range []struct{ config, in, want string }{
		{`{"preset": "safe"}`, `{"tool":"bash","action":"run","arguments":{"command":"sudo rm x"}}`,
			`{"decision":"deny","reason_code":"permission.denied_by_rule","detail":"denied by rule: sudo *","message":"permission denied: bash is not allowed for this command","matched_rule":"sudo *"}`},
		{`{"preset": "safe"}`, `{"tool":"bash","action":"run","arguments":{"command":"make 2>&1"}}`,
			`{"decision":"deny","reason_code":"permission.shell_control","detail":"Shell control operator requires explicit approval: 'make 2>&1'","message":"permission denied: bash is not allowed for this command"}`},
		{`{"preset": "safe"}`, `{"tool":"bash","action":"run","arguments":{"command":"cargo build"}}`,
			`{"decision":"require_approval","reason_code":"permission.escalate","detail":"escalate by rule: *","message":"approval required: bash command requires application approval before execution","matched_rule":"*","deny_message":"permission denied: bash is not allowed for this command"}`},
		{`{"preset": "safe"}`, `{"tool":"editor","action":"write","arguments":{"file_path":"/w/a.py"}}`,
			`{"decision":"allow","reason_code":"permission.allowed_by_rule","detail":"allowed by rule: *","matched_rule":"*"}`},
		{`{"preset": "safe"}`, `{"tool":"bash","action":"run","arguments":{"command":"sudo ls"}}`,
			`{"decision":"deny","reason_code":"permission.denied_by_rule","detail":"denied by rule: sudo *","message":"permission denied: bash is not allowed for this command","matched_rule":"sudo *"}`},
		{`{"agentlane": {"grants": "read, write:create_file", "side_effect_approval": {}}}`, `{"tool":"read","operation":"read_file","arguments":{"path":"/w/a"}}`,
			`{"decision":"allow","reason_code":"permission.granted","detail":"granted by read","matched_rule":"read"}`},
		{`{"agentlane": {"grants": "read, write:create_file", "side_effect_approval": {}}}`, `{"tool":"write","operation":"create_file","arguments":{"path":"/w/notes.txt"}}`,
			`{"decision":"require_approval","reason_code":"permission.side_effect_approval","detail":"create_file is a side effect that requires approval","message":"approval required: write requires application approval for ` + "`/w/notes.txt`" + ` before execution","deny_message":"permission denied: write is not allowed for ` + "`/w/notes.txt`" + `"}`},
		{`{"agentlane": {"grants": "read, write:create_file", "side_effect_approval": {}}}`, `{"tool":"bash","operation":"execute_command","arguments":{"command":"ls"}}`,
			`{"decision":"deny","reason_code":"permission.not_granted","detail":"no grant allows bash:execute_command","message":"permission denied: bash is not allowed for this command"}`},
		// A later rule list under another spelling of the tool replaces the
		// earlier one (LionAGI canonicalises the rule map's keys).
		{`{"lionagi":{"mode":"rules","allow":[{"tool":"bash","patterns":["git *"]},{"tool":"BASH","patterns":["ls"]}]}}`, `{"tool":"bash","arguments":{"command":"git status"}}`,
			`{"decision":"deny","reason_code":"permission.default_deny","detail":"no matching rule, default deny","message":"permission denied: bash is not allowed for this command"}`},
		{`{"agentlane":{"grants":""}}`, `{"tool":"read","operation":"read_file"}`,
			`{"decision":"deny","reason_code":"permission.not_granted","detail":"no grant allows read:read_file","message":"permission denied: read is not allowed"}`},
	} {
		var in abi.GateInput
		require.NoError(t, json.Unmarshal([]byte(tc.in), &in))
		got := m.gate(t, "permission", tc.config)(in)
		raw, err := json.Marshal(got)
		require.NoError(t, err)
		require.JSONEq(t, tc.want, string(raw), "%s %s", tc.config, tc.in)
	}
}

// TestPermission_Arguments: arguments that are not an object deny with
// permission.invalid_arguments in the families that read them; absent,
// null and empty arguments are no arguments; deny_all reads none.
func TestPermission_Arguments(t *testing.T) {
	m := newModuleHost(t)
	rules := m.gate(t, "permission", `{"lionagi":{"mode":"rules","allow":{"*":["*"]}}}`)
	grants := m.gate(t, "permission", `{"agentlane":{"grants":"read"}}`)
	denyAll := m.gate(t, "permission", `{"preset":"deny_all"}`)
	for _, g := range []func(abi.GateInput) abi.GateOutput{rules, grants} {
		out := g(abi.GateInput{Tool: "read", Operation: "read_file", Arguments: json.RawMessage(`[1]`)})
		require.Equal(t, abi.DecisionDeny, out.Decision)
		require.Equal(t, "permission.invalid_arguments", out.ReasonCode)
		require.Equal(t, "permission denied: read is not allowed", out.Message)
		for _, empty := range []json.RawMessage{nil, json.RawMessage(`null`), json.RawMessage(` {} `)} {
			out = g(abi.GateInput{Tool: "read", Operation: "read_file", Arguments: empty})
			require.Equal(t, abi.DecisionAllow, out.Decision, "%s", empty)
		}
	}
	out := denyAll(abi.GateInput{Tool: "bash", Arguments: json.RawMessage(`"x"`)})
	require.Equal(t, "permission.mode_deny_all", out.ReasonCode)
	require.Equal(t, "permission denied: bash is not allowed", out.Message)
}

// TestPermission_ArgumentOrder: without argument_order the arguments
// object's own order is used; a repeated name is used once.
func TestPermission_ArgumentOrder(t *testing.T) {
	g := newModuleHost(t).gate(t, "permission", `{"lionagi":{"mode":"rules","allow":{"t":["go a b"]}}}`)
	in := abi.GateInput{Tool: "t", Action: "go", Arguments: json.RawMessage(`{"x":"a","y":"b"}`)}
	require.Equal(t, abi.DecisionAllow, g(in).Decision)
	in.ArgumentOrder = []string{"y", "x"}
	require.Equal(t, abi.DecisionDeny, g(in).Decision)
	in.ArgumentOrder = []string{"x", "x", "y"}
	require.Equal(t, abi.DecisionAllow, g(in).Decision, "a repeated name is used once")
}

// TestPermission_Configs: configurations of every family the module
// accepts, and ones it refuses (their exact texts: config_errors.json);
// a document that is not JSON the host refuses before the module.
func TestPermission_Configs(t *testing.T) {
	m := newModuleHost(t)
	for _, config := range []string{
		`{"preset":"safe"}`, `{"preset":"SaFe"}`, `{"lionagi":"deny_all"}`, `{"lionagi":{}}`,
		`{"lionagi":{"mode":"rules","allow":{},"deny":{"*":[]},"escalate":{"bash":["*"]}}}`,
		`{"agentlane":{}}`, `{"agentlane":{"grants":null,"known_tools":null,"side_effect_approval":null}}`,
		`{"agentlane":{"grants":"read,write:create_file","whole_tool_grants":"declared","side_effect_approval":{"operations":null,"grants":null}}}`,
		`{"agentlane":{"grants":"noop","known_tools":{"noop":[]}}}`, " \n{\"preset\":\"read_only\"}\n ",
	} {
		_, err := m.configure(t, "permission", []byte(config))
		require.NoError(t, err, config)
	}
	for _, config := range []string{
		``, `{preset: safe}`, `{"preset":"safe"} x`, `["safe"]`, `{}`, `{"preset":"safe","agentlane":{}}`, `{"presets":"safe"}`,
		`{"preset":"paranoid"}`, `{"lionagi":"strict"}`, `{"preset":""}`, `{"preset":1}`, `{"lionagi":true}`, `{"lionagi":{"alow":{}}}`,
		`{"lionagi":{"on_escalate":null}}`, `{"lionagi":{"mode":5}}`, `{"lionagi":{"mode":null}}`, `{"lionagi":{"allow":"bash"}}`,
		`{"lionagi":{"allow":[["bash",["*"]]]}}`, `{"lionagi":{"allow":[{"tool":"bash"}]}}`, `{"lionagi":{"deny":[{"tool":"bash","patterns":[],"why":"x"}]}}`,
		`{"lionagi":{"deny":[{"tool":1,"patterns":[]}]}}`, `{"lionagi":{"escalate":[{"tool":"bash","patterns":["a",1]}]}}`, `{"lionagi":{"deny":null}}`,
		`{"lionagi":{"allow":{"bash":"rm *"}}}`, `{"lionagi":{"escalate":{"bash":["a",1]}}}`, `{"lionagi":{"allow":{"mcp tool":[null]}}}`,
		`{"agentlane":"read"}`, `{"agentlane":{"grant":"read"}}`, `{"agentlane":{"grants":["read"]}}`,
		`{"agentlane":{"grants":"read, write:read_file, unknown, bash:missing"}}`, `{"agentlane":{"grants":" Read:Bogus "}}`,
		`{"agentlane":{"grants":"read:"}}`, `{"agentlane":{"grants":"read:read_file:x"}}`, `{"agentlane":{"grants":"web_search:network_access"}}`,
		`{"agentlane":{"grants":"web_search:read_file","known_tools":{"web_search":["network_access"]}}}`,
		`{"agentlane":{"grants":"WebSearch","known_tools":{"WebSearch":["network_access"]}}}`,
		`{"agentlane":{"grants":"bash:network_access","known_tools":{"bash":["network_access"]}}}`, `{"agentlane":{"grants":"write_plan, agent"}}`,
		`{"agentlane":{"known_tools":{"x":["read_file","delete"]}}}`, `{"agentlane":{"known_tools":{"x":"read_file"}}}`,
		`{"agentlane":{"whole_tool_grants":"all"}}`, `{"agentlane":{"side_effect_approval":false}}`, `{"agentlane":{"side_effect_approval":{"ops":[]}}}`,
		`{"agentlane":{"side_effect_approval":{"operations":["write_file"]}}}`, `{"agentlane":{"side_effect_approval":{"grants":"bash:run"}}}`,
		`{"agentlane":{"grants":"bash","side_effect_approval":{"grants":"bash","grants_downgrade":true}}}`,
		`{"coding":{"operations":{"delete_file":"allow"}}}`, `{"coding":{"tools":{"plan":"maybe"}}}`, `{"coding":{"operations":{"execute_command":"commands"}}}`,
		`{"coding":{"commands":{"read_only":["ls | sh"]}}}`, `{"coding":{"commands":{"read_only":["ls"],"forbid":{"find":["-delete"]}}}}`,
		`{"coding":{"default":"allow"}}`, `{"agentlane":{"side_effect_approval":{"grants_downgrade":"yes"}}}`,
	} {
		_, err := m.configure(t, "permission", []byte(config))
		require.True(t, refused(err) || (!json.Valid([]byte(config)) && errors.Is(err, host.ErrBadGateConfig)), "%s: %v", config, err)
	}
}

// TestPermission_NoStateBetweenCalls: an instance serves call after call;
// a verdict must not depend on the calls before it. Each of a run of
// different requests gets the same verdict when the run is replayed in
// reverse order on another gate.
func TestPermission_NoStateBetweenCalls(t *testing.T) {
	const config = `{"lionagi":{"mode":"rules","deny":{"*":["*secret*"],"bash":["rm *"]},"allow":{"bash":["ls *"],"editor":["/w/*"],"*":["get *"]},"escalate":{"*":["*"]}}}`
	tools := []string{"bash", "BASH_TOOL", "editor", "reader", "search", "web_fetch", "*"}
	values := []string{`"ls -la src"`, `"rm -rf x"`, `"/w/a"`, `"my-secret"`, `"get https://x"`, `5`, `null`, `[1,{"a":"b"}]`, `{"k":"v"}`, `"a; b"`}
	keys := []string{"command", "file_path", "path", "pattern", "url", "command"}
	rng := rand.New(rand.NewPCG(5, 6))
	var ins []abi.GateInput
	for range 1000 {
		var b strings.Builder
		b.WriteByte('{')
		for n := rng.IntN(4); n > 0; n-- {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + keys[rng.IntN(len(keys))] + `":` + values[rng.IntN(len(values))])
		}
		b.WriteByte('}')
		if !json.Valid([]byte(b.String())) || strings.Count(b.String(), `"command"`) > 1 {
			continue // a repeated member: the host refuses such arguments
		}
		ins = append(ins, abi.GateInput{Tool: tools[rng.IntN(len(tools))], Action: "get", Arguments: []byte(b.String())})
	}
	m := newModuleHost(t)
	forward, backward := m.gate(t, "permission", config), m.gate(t, "permission", config)
	outs := make([]abi.GateOutput, len(ins))
	for i, in := range ins {
		outs[i] = forward(in)
	}
	for i := len(ins) - 1; i >= 0; i-- {
		if got := backward(ins[i]); !reflect.DeepEqual(got, outs[i]) {
			t.Fatalf("%s %s: %+v in one order, %+v in the other", ins[i].Tool, ins[i].Arguments, outs[i], got)
		}
	}
}

// FuzzPermission_Configure: any configuration is either accepted or
// refused (never a failure of the module), and a configured gate answers
// a decision of the closed set with a reason code.
func FuzzPermission_Configure(f *testing.F) {
	for _, s := range []string{
		`{"preset":"safe"}`, `{"lionagi":{"mode":"rules","allow":{"bash":["git *"],"BASH":["[!a-"]}}}`,
		`{"agentlane":{"grants":"read, write:create_file","known_tools":{"x":["network_access"]},"side_effect_approval":{"grants_downgrade":true}}}`,
		`{"agentlane":{"side_effect_approval":true,"whole_tool_grants":"any_operation","grants":"bash"}}`,
	} {
		f.Add([]byte(s))
	}
	in := abi.GateInput{Tool: "bash", Action: "run", Operation: "execute_command", Arguments: json.RawMessage(`{"command":"ls -la","path":"/w"}`)}
	f.Fuzz(func(t *testing.T, config []byte) {
		out, err := configureOnce(t, "permission", config, in)
		if err != nil {
			if !refused(err) && !errors.Is(err, host.ErrBadGateConfig) {
				t.Fatalf("config %q: %v, not a refusal", config, err)
			}
			return
		}
		if !out.Decision.Valid() || out.ReasonCode == "" {
			t.Fatalf("invalid output %+v", out)
		}
	})
}

// FuzzPermission_Evaluate: any request gets a decision of the closed set
// with a reason code, and a model-facing message exactly when it is not
// allowed.
func FuzzPermission_Evaluate(f *testing.F) {
	m := newModuleHost(f)
	var gates []func(abi.GateInput) abi.GateOutput
	for _, c := range []string{
		`{"preset":"safe"}`, `{"preset":"deny_all"}`,
		`{"lionagi":{"mode":"rules","deny":{"*":["*secret*"]},"allow":{"editor":["/w/*"],"*":["get *"]},"escalate":{"*":["*"]}}}`,
		`{"agentlane":{"grants":"read, write, bash:execute_command","side_effect_approval":{}}}`,
	} {
		gates = append(gates, m.gate(f, "permission", c))
	}
	f.Add("bash", "run", "", []byte(`{"command":"ls; rm"}`))
	f.Add("editor", "write", "", []byte(`{"file_path":5}`))
	f.Add("write", "", "create_file", []byte(`{"path":"/w/x"}`))
	f.Add("search", "grep", "", []byte(`{"pattern":[1],"path":{"a":1}}`))
	f.Fuzz(func(t *testing.T, tool, action, operation string, args []byte) {
		if len(args) > 0 && !abi.ValidJSON(args) {
			return // the host refuses them before any gate
		}
		in := abi.GateInput{Tool: tool, Action: action, Operation: operation, Arguments: args}
		for _, g := range gates {
			out := g(in)
			if !out.Decision.Valid() || out.ReasonCode == "" {
				t.Fatalf("invalid output %+v", out)
			}
			if (out.Decision == abi.DecisionAllow) != (out.Message == "") {
				t.Fatalf("message %q with decision %s", out.Message, out.Decision)
			}
		}
	})
}

// fnmatchLiteral is a pattern that fnmatch matches against s alone.
func fnmatchLiteral(s string) string {
	r := strings.NewReplacer("[", "[[]", "*", "[*]", "?", "[?]")
	return r.Replace(s)
}

// matchesByRule asks the permission module whether LionAGI's _matches
// (fnmatch, then the lower-case fallback) matches text against each
// pattern: one configuration with a tool per pattern ("t<i>": allow
// [" "+pattern]), each tool called with text as its one argument. A tool
// outside bash, editor, reader and search matches "<action> <str(value)>",
// and a leading literal space changes nothing of what fnmatch matches.
// Pairs go a batch per configuration: the module looks a tool's rules up
// in a list.
func matchesByRule(t *testing.T, m *moduleHost, pairs [][2]string, args func(text string) json.RawMessage) []bool {
	t.Helper()
	const batch = 256
	out := make([]bool, 0, len(pairs))
	for start := 0; start < len(pairs); start += batch {
		chunk := pairs[start:min(start+batch, len(pairs))]
		rules := map[string][]string{}
		for i, p := range chunk {
			rules[fmt.Sprintf("t%d", i)] = []string{" " + p[0]}
		}
		config, err := json.Marshal(map[string]any{"lionagi": map[string]any{"mode": "rules", "allow": rules}})
		require.NoError(t, err)
		g := m.gate(t, "permission", string(config))
		for i, p := range chunk {
			got := g(abi.GateInput{Tool: fmt.Sprintf("t%d", i), Arguments: args(p[1])})
			require.Contains(t, []string{"permission.allowed_by_rule", "permission.default_deny"}, got.ReasonCode, "%q %q: %s", p[0], p[1], got.Detail)
			out = append(out, got.Decision == abi.DecisionAllow)
		}
	}
	return out
}

func stringArgument(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"v": text})
	return b
}

// TestPermission_Matches_CPythonGolden checks LionAGI's _matches in the
// module against CPython 3.11's answers (testdata/translate_golden.py,
// fourth column), and fnmatch.fnmatchcase on path-like texts
// (testdata/fnmatch_golden.py) where no letter case is involved, so that
// _matches is fnmatchcase.
func TestPermission_Matches_CPythonGolden(t *testing.T) {
	m := newModuleHost(t)
	for _, tc := range []struct {
		file string
		col  int
	}{{"translate_golden.json", 3}, {"fnmatch_golden.json", 2}} {
		raw, err := os.ReadFile("../permission/testdata/" + tc.file)
		require.NoError(t, err)
		var g struct {
			Cases [][]any `json:"cases"`
		}
		require.NoError(t, json.Unmarshal(raw, &g))
		var pairs [][2]string
		var want []bool
		for _, c := range g.Cases {
			p, text := c[0].(string), c[1].(string)
			if tc.col == 2 && (strings.ToLower(p) != p || strings.ToLower(text) != text) {
				continue
			}
			pairs, want = append(pairs, [2]string{p, text}), append(want, c[tc.col].(bool))
		}
		require.Greater(t, len(pairs), 4000, tc.file)
		got := matchesByRule(t, m, pairs, stringArgument)
		for i := range pairs {
			require.Equal(t, want[i], got[i], "%s: _matches(%q, %q)", tc.file, pairs[i][1], pairs[i][0])
		}
	}
}

// TestPermission_PythonText_CPythonGolden: the str() of argument values
// the module matches (lists and objects print their members' repr()), the
// str() of JSON numbers, and str.lower() of the lower-case fallback, as
// CPython prints them (testdata/gen_golden.py).
func TestPermission_PythonText_CPythonGolden(t *testing.T) {
	raw, err := os.ReadFile("../permission/testdata/pytext_golden.json")
	require.NoError(t, err)
	var g struct {
		Values []struct {
			JSON string `json:"json"`
			Str  string `json:"str"`
			Repr string `json:"repr"`
		} `json:"values"`
		Numbers []struct {
			Literal string `json:"literal"`
			Str     string `json:"str"`
		} `json:"numbers"`
		Lower []struct {
			Text  string `json:"text"`
			Lower string `json:"lower"`
		} `json:"lower"`
	}
	require.NoError(t, json.Unmarshal(raw, &g))
	require.NotEmpty(t, g.Values)
	m := newModuleHost(t)
	var pairs [][2]string
	var docs []string
	for _, v := range g.Values {
		pairs = append(pairs, [2]string{fnmatchLiteral(v.Str), ""}, [2]string{fnmatchLiteral("[" + v.Repr + "]"), ""})
		docs = append(docs, v.JSON, "["+v.JSON+"]")
	}
	for _, n := range g.Numbers {
		pairs = append(pairs, [2]string{fnmatchLiteral(n.Str), ""})
		docs = append(docs, n.Literal)
	}
	// str(float): Python's repr of a double.
	for lit, want := range map[string]string{"0.0": "0.0", "-0.0": "-0.0", "1.0": "1.0", "1.5": "1.5", "1e16": "1e+16", "1e15": "1000000000000000.0",
		"0.0001": "0.0001", "0.00001": "1e-05", "-2.5e-300": "-2.5e-300", "1e400": "inf", "-1e400": "-inf", "0.1": "0.1"} {
		pairs = append(pairs, [2]string{fnmatchLiteral(want), ""})
		docs = append(docs, lit)
	}
	for i := range pairs {
		pairs[i][1] = fmt.Sprint(i)
	}
	got := matchesByRule(t, m, pairs, func(i string) json.RawMessage {
		var n int
		fmt.Sscan(i, &n)
		return json.RawMessage(`{"v":` + docs[n] + `}`)
	})
	for i := range pairs {
		require.True(t, got[i], "str(%s) is not %q", docs[i], pairs[i][0])
	}
	// lower(): the fallback matches text against the lowered pattern only
	// if lower(text) is the lowered pattern.
	pairs = pairs[:0]
	for _, l := range g.Lower {
		pairs = append(pairs, [2]string{fnmatchLiteral(l.Lower), l.Text})
	}
	for i, ok := range matchesByRule(t, m, pairs, stringArgument) {
		require.True(t, ok, "%q.lower() is not %q", g.Lower[i].Text, g.Lower[i].Lower)
	}
}

// TestPermission_PythonQuoteAndPathTexts: repr() of a str in the reasons
// (an unknown operation), and str(PurePosixPath) in AgentLane's messages.
func TestPermission_PythonQuoteAndPathTexts(t *testing.T) {
	g := newModuleHost(t).gate(t, "permission", `{"agentlane":{"grants":""}}`)
	for _, tc := range []struct{ in, want string }{
		{"a;b", "'a;b'"}, {"it's", `"it's"`}, {`"`, `'"'`}, {`it's "x"`, `'it\'s "x"'`},
		{"a\nb", `'a\nb'`}, {"2>&1", "'2>&1'"}, {"\x1b[0m", `'\x1b[0m'`}, {`C:\x`, `'C:\\x'`},
	} {
		out := g(abi.GateInput{Tool: "t", Operation: tc.in})
		require.Equal(t, "unknown operation "+tc.want, out.Detail, "%q", tc.in)
	}
	for _, tc := range []struct{ in, want string }{
		{"/workspace/private.txt", "/workspace/private.txt"}, {"/", "/"}, {"//", "//"}, {"///a", "/a"}, {"//a/b", "//a/b"},
		{"a//b/./c/", "a/b/c"}, {"./", "."}, {"a/../b", "a/../b"}, {"secret", "secret"},
	} {
		args, _ := json.Marshal(map[string]string{"path": tc.in})
		out := g(abi.GateInput{Tool: "read", Operation: "read_file", Arguments: args})
		require.Equal(t, "permission denied: read is not allowed for `"+tc.want+"`", out.Message, "%q", tc.in)
	}
}
