package permission_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/permission"
)

func TestNew_ConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		kind    error
		field   string
		detail  string   // exact Detail when set
		entries []string // ErrInvalidGrants only
	}{
		{name: "empty document", config: ``, kind: permission.ErrSyntax},
		{name: "not JSON", config: `{preset: safe}`, kind: permission.ErrSyntax},
		{name: "trailing data", config: `{"preset":"safe"} x`, kind: permission.ErrSyntax},
		{name: "not an object", config: `["safe"]`, kind: permission.ErrWrongType},
		{name: "no family", config: `{}`, kind: permission.ErrFamily},
		{name: "two families", config: `{"preset":"safe","agentlane":{}}`, kind: permission.ErrFamily},
		{name: "unknown top-level field", config: `{"presets":"safe"}`, kind: permission.ErrUnknownField, field: "presets"},
		{name: "unknown preset", config: `{"preset":"paranoid"}`, kind: permission.ErrUnknownPreset, field: "preset",
			detail: `unknown preset "paranoid" (want one of allow_all, deny_all, read_only, safe)`},
		{name: "unknown preset spelled in lionagi", config: `{"lionagi":"strict"}`, kind: permission.ErrUnknownPreset, field: "lionagi"},
		{name: "empty preset", config: `{"preset":""}`, kind: permission.ErrUnknownPreset, field: "preset"},
		{name: "preset not a string", config: `{"preset":1}`, kind: permission.ErrWrongType, field: "preset"},
		{name: "lionagi wrong type", config: `{"lionagi":true}`, kind: permission.ErrWrongType, field: "lionagi"},
		{name: "lionagi unknown field", config: `{"lionagi":{"alow":{}}}`, kind: permission.ErrUnknownField, field: "lionagi.alow"},
		{name: "lionagi on_escalate", config: `{"lionagi":{"on_escalate":null}}`, kind: permission.ErrUnknownField, field: "lionagi.on_escalate"},
		{name: "mode not a string", config: `{"lionagi":{"mode":5}}`, kind: permission.ErrWrongType, field: "lionagi.mode",
			detail: "must be a string, not number"},
		{name: "mode null", config: `{"lionagi":{"mode":null}}`, kind: permission.ErrWrongType, field: "lionagi.mode"},
		{name: "rule map not an object", config: `{"lionagi":{"allow":"bash"}}`, kind: permission.ErrWrongType, field: "lionagi.allow"},
		{name: "rule list entry not an object", config: `{"lionagi":{"allow":[["bash",["*"]]]}}`, kind: permission.ErrWrongType, field: "lionagi.allow[0]"},
		{name: "rule list entry without patterns", config: `{"lionagi":{"allow":[{"tool":"bash"}]}}`, kind: permission.ErrBadValue, field: "lionagi.allow[0]"},
		{name: "rule list entry unknown field", config: `{"lionagi":{"deny":[{"tool":"bash","patterns":[],"why":"x"}]}}`, kind: permission.ErrUnknownField, field: "lionagi.deny[0].why"},
		{name: "rule list tool not a string", config: `{"lionagi":{"deny":[{"tool":1,"patterns":[]}]}}`, kind: permission.ErrWrongType, field: "lionagi.deny[0].tool"},
		{name: "rule list pattern not a string", config: `{"lionagi":{"escalate":[{"tool":"bash","patterns":["a",1]}]}}`, kind: permission.ErrWrongType, field: "lionagi.escalate[0].patterns[1]"},
		{name: "rule map null", config: `{"lionagi":{"deny":null}}`, kind: permission.ErrWrongType, field: "lionagi.deny"},
		{name: "rule list a string", config: `{"lionagi":{"allow":{"bash":"rm *"}}}`, kind: permission.ErrWrongType, field: "lionagi.allow.bash"},
		{name: "pattern not a string", config: `{"lionagi":{"escalate":{"bash":["a",1]}}}`, kind: permission.ErrWrongType, field: "lionagi.escalate.bash[1]"},
		{name: "odd key quoted in field path", config: `{"lionagi":{"allow":{"mcp tool":[null]}}}`, kind: permission.ErrWrongType, field: `lionagi.allow["mcp tool"][0]`},
		{name: "agentlane wrong type", config: `{"agentlane":"read"}`, kind: permission.ErrWrongType, field: "agentlane"},
		{name: "agentlane unknown field", config: `{"agentlane":{"grant":"read"}}`, kind: permission.ErrUnknownField, field: "agentlane.grant"},
		{name: "grants not a string", config: `{"agentlane":{"grants":["read"]}}`, kind: permission.ErrWrongType, field: "agentlane.grants"},
		{
			name: "invalid grants reported together", config: `{"agentlane":{"grants":"read, write:read_file, unknown, bash:missing"}}`,
			kind: permission.ErrInvalidGrants, field: "agentlane.grants",
			entries: []string{"write:read_file", "unknown", "bash:missing"},
			detail:  "unsupported tool grants: ('write:read_file', 'unknown', 'bash:missing')",
		},
		{name: "invalid grant reported trimmed and lower-cased", config: `{"agentlane":{"grants":" Read:Bogus "}}`,
			kind: permission.ErrInvalidGrants, field: "agentlane.grants", entries: []string{"read:bogus"},
			detail: "unsupported tool grants: ('read:bogus',)"},
		{name: "empty operation after colon", config: `{"agentlane":{"grants":"read:"}}`, kind: permission.ErrInvalidGrants, entries: []string{"read:"}},
		{name: "operation with second colon", config: `{"agentlane":{"grants":"read:read_file:x"}}`, kind: permission.ErrInvalidGrants, entries: []string{"read:read_file:x"}},
		{name: "app tool without known_tools", config: `{"agentlane":{"grants":"web_search:network_access"}}`,
			kind: permission.ErrInvalidGrants, entries: []string{"web_search:network_access"}},
		{name: "app tool operation outside its set", config: `{"agentlane":{"grants":"web_search:read_file","known_tools":{"web_search":["network_access"]}}}`,
			kind: permission.ErrInvalidGrants, entries: []string{"web_search:read_file"}},
		{name: "known_tools key is not lower-cased", config: `{"agentlane":{"grants":"WebSearch","known_tools":{"WebSearch":["network_access"]}}}`,
			kind: permission.ErrInvalidGrants, entries: []string{"websearch"}},
		{name: "built-in wins over known_tools", config: `{"agentlane":{"grants":"bash:network_access","known_tools":{"bash":["network_access"]}}}`,
			kind: permission.ErrInvalidGrants, entries: []string{"bash:network_access"}},
		{name: "write_plan is not grantable", config: `{"agentlane":{"grants":"write_plan, agent"}}`,
			kind: permission.ErrInvalidGrants, entries: []string{"write_plan", "agent"}},
		{name: "known_tools unknown operation", config: `{"agentlane":{"known_tools":{"x":["read_file","delete"]}}}`,
			kind: permission.ErrUnknownOperation, field: "agentlane.known_tools.x[1]"},
		{name: "known_tools wrong type", config: `{"agentlane":{"known_tools":{"x":"read_file"}}}`, kind: permission.ErrWrongType, field: "agentlane.known_tools.x"},
		{name: "whole_tool_grants unknown", config: `{"agentlane":{"whole_tool_grants":"all"}}`, kind: permission.ErrBadValue, field: "agentlane.whole_tool_grants"},
		{name: "side_effect_approval false", config: `{"agentlane":{"side_effect_approval":false}}`, kind: permission.ErrWrongType, field: "agentlane.side_effect_approval"},
		{name: "side_effect_approval unknown field", config: `{"agentlane":{"side_effect_approval":{"ops":[]}}}`,
			kind: permission.ErrUnknownField, field: "agentlane.side_effect_approval.ops"},
		{name: "side_effect_approval unknown operation", config: `{"agentlane":{"side_effect_approval":{"operations":["write_file"]}}}`,
			kind: permission.ErrUnknownOperation, field: "agentlane.side_effect_approval.operations[0]"},
		{name: "side_effect_approval invalid grants", config: `{"agentlane":{"side_effect_approval":{"grants":"bash:run"}}}`,
			kind: permission.ErrInvalidGrants, field: "agentlane.side_effect_approval.grants", entries: []string{"bash:run"}},
		{name: "side_effect_approval grants and grants_downgrade", config: `{"agentlane":{"grants":"bash","side_effect_approval":{"grants":"bash","grants_downgrade":true}}}`,
			kind: permission.ErrConflict, field: "agentlane.side_effect_approval"},
		{name: "coding unknown operation", config: `{"coding":{"operations":{"delete_file":"allow"}}}`,
			kind: permission.ErrUnknownOperation, field: "coding.operations.delete_file"},
		{name: "coding unknown decision", config: `{"coding":{"tools":{"plan":"maybe"}}}`, kind: permission.ErrBadValue, field: "coding.tools.plan"},
		{name: "coding commands decision without a commands section", config: `{"coding":{"operations":{"execute_command":"commands"}}}`,
			kind: permission.ErrBadValue, field: "coding.operations.execute_command"},
		{name: "coding read_only entry with a pipe", config: `{"coding":{"commands":{"read_only":["ls | sh"]}}}`,
			kind: permission.ErrBadValue, field: "coding.commands.read_only[0]"},
		{name: "coding forbid names no read_only entry", config: `{"coding":{"commands":{"read_only":["ls"],"forbid":{"find":["-delete"]}}}}`,
			kind: permission.ErrBadValue, field: "coding.commands.forbid.find"},
		{name: "coding unknown field", config: `{"coding":{"default":"allow"}}`, kind: permission.ErrUnknownField, field: "coding.default"},
		{name: "grants_downgrade not a boolean", config: `{"agentlane":{"side_effect_approval":{"grants_downgrade":"yes"}}}`,
			kind: permission.ErrWrongType, field: "agentlane.side_effect_approval.grants_downgrade"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := permission.New([]byte(tt.config))
			require.Nil(t, g)
			require.Error(t, err)
			require.ErrorIs(t, err, permission.ErrConfig)
			require.ErrorIs(t, err, tt.kind)
			var ce *permission.ConfigError
			require.ErrorAs(t, err, &ce)
			if tt.field != "" {
				require.Equal(t, tt.field, ce.Field)
				require.Contains(t, err.Error(), tt.field)
			}
			if tt.detail != "" {
				require.Equal(t, tt.detail, ce.Detail)
			}
			if tt.entries != nil {
				require.Equal(t, tt.entries, ce.Entries)
			}
			// Still matched after wrapping.
			wrapped := fmt.Errorf("binding gate-1: %w", err)
			require.ErrorIs(t, wrapped, permission.ErrConfig)
			require.ErrorIs(t, wrapped, tt.kind)
			require.ErrorAs(t, wrapped, &ce)
		})
	}
}

func TestNew_ValidConfigs(t *testing.T) {
	for _, config := range []string{
		`{"preset":"safe"}`,
		`{"preset":"SaFe"}`,
		`{"lionagi":"deny_all"}`,
		`{"lionagi":{}}`,
		`{"lionagi":{"mode":"rules","allow":{},"deny":{"*":[]},"escalate":{"bash":["*"]}}}`,
		`{"agentlane":{}}`,
		`{"agentlane":{"grants":null,"known_tools":null,"side_effect_approval":null}}`,
		`{"agentlane":{"grants":"read,write:create_file","whole_tool_grants":"declared","side_effect_approval":{"operations":null,"grants":null}}}`,
		`{"agentlane":{"grants":"noop","known_tools":{"noop":[]}}}`,
		" \n{\"preset\":\"read_only\"}\n ",
	} {
		g, err := permission.New([]byte(config))
		require.NoError(t, err, config)
		require.NotNil(t, g)
	}
}

func TestNewFromConfig(t *testing.T) {
	g, err := permission.NewFromConfig(&permission.Config{Preset: "safe"})
	require.NoError(t, err)
	out := g.Evaluate(abi.GateInput{Tool: "bash", Action: "run", Arguments: json.RawMessage(`{"command":"sudo ls"}`)})
	require.Equal(t, abi.DecisionDeny, out.Decision)
	require.Equal(t, "sudo *", out.MatchedRule)

	mode := "rules"
	g, err = permission.NewFromConfig(&permission.Config{LionAGI: &permission.LionAGIConfig{
		Mode:  &mode,
		Allow: []permission.ToolRules{{Tool: "bash", Patterns: []string{"git *"}}, {Tool: "BASH", Patterns: []string{"ls"}}},
	}})
	require.NoError(t, err)
	out = g.Evaluate(abi.GateInput{Tool: "bash", Arguments: json.RawMessage(`{"command":"git status"}`)})
	require.Equal(t, permission.CodeDefaultDeny, out.ReasonCode, "the later BASH list replaced bash's")

	grants := ""
	g, err = permission.NewFromConfig(&permission.Config{AgentLane: &permission.AgentLaneConfig{Grants: &grants}})
	require.NoError(t, err)
	out = g.Evaluate(abi.GateInput{Tool: "read", Operation: "read_file"})
	require.Equal(t, permission.CodeNotGranted, out.ReasonCode)
	require.Equal(t, "permission denied: read is not allowed", out.Message)

	_, err = permission.NewFromConfig(&permission.Config{})
	require.ErrorIs(t, err, permission.ErrFamily)
	_, err = permission.NewFromConfig(&permission.Config{Preset: "safe", AgentLane: &permission.AgentLaneConfig{}})
	require.ErrorIs(t, err, permission.ErrFamily)
	_, err = permission.NewFromConfig(&permission.Config{Preset: "nope"})
	require.ErrorIs(t, err, permission.ErrUnknownPreset)
}

func TestGate_Evaluate_Arguments(t *testing.T) {
	rules, err := permission.New([]byte(`{"lionagi":{"mode":"rules","allow":{"*":["*"]}}}`))
	require.NoError(t, err)
	grants, err := permission.New([]byte(`{"agentlane":{"grants":"read"}}`))
	require.NoError(t, err)
	denyAll, err := permission.New([]byte(`{"preset":"deny_all"}`))
	require.NoError(t, err)

	for _, g := range []*permission.Gate{rules, grants} {
		out := g.Evaluate(abi.GateInput{Tool: "read", Operation: "read_file", Arguments: json.RawMessage(`[1]`)})
		require.Equal(t, abi.DecisionDeny, out.Decision)
		require.Equal(t, permission.CodeInvalidArguments, out.ReasonCode)
		require.Equal(t, "permission denied: read is not allowed", out.Message)

		out = g.Evaluate(abi.GateInput{Tool: "read", Operation: "read_file", Arguments: json.RawMessage(`{"path":`)})
		require.Equal(t, permission.CodeInvalidArguments, out.ReasonCode)

		for _, empty := range []json.RawMessage{nil, json.RawMessage(`null`), json.RawMessage(` {} `)} {
			out = g.Evaluate(abi.GateInput{Tool: "read", Operation: "read_file", Arguments: empty})
			require.Equal(t, abi.DecisionAllow, out.Decision, "%s", empty)
		}
	}
	// deny_all reads no arguments: bad ones still give its own reason.
	out := denyAll.Evaluate(abi.GateInput{Tool: "bash", Arguments: json.RawMessage(`"x"`)})
	require.Equal(t, permission.CodeModeDenyAll, out.ReasonCode)
	require.Equal(t, "permission denied: bash is not allowed", out.Message)
}

// TestGate_Evaluate_ArgumentOrder: without argument_order the arguments
// object's own order is used (key-sorted when canonical).
func TestGate_Evaluate_ArgumentOrder(t *testing.T) {
	g, err := permission.New([]byte(`{"lionagi":{"mode":"rules","allow":{"t":["go a b"]}}}`))
	require.NoError(t, err)
	in := abi.GateInput{Tool: "t", Action: "go", Arguments: json.RawMessage(`{"x":"a","y":"b"}`)}
	require.Equal(t, abi.DecisionAllow, g.Evaluate(in).Decision)
	in.ArgumentOrder = []string{"y", "x"}
	require.Equal(t, abi.DecisionDeny, g.Evaluate(in).Decision)
	in.ArgumentOrder = []string{"x", "x", "y"}
	require.Equal(t, abi.DecisionAllow, g.Evaluate(in).Decision, "a repeated name is used once")
}

func TestConfigError_Is(t *testing.T) {
	_, err := permission.New([]byte(`{"preset":"x"}`))
	require.True(t, errors.Is(err, permission.ErrUnknownPreset))
	require.False(t, errors.Is(err, permission.ErrInvalidGrants))
	require.Equal(t, `permission: config field preset: unknown preset "x" (want one of allow_all, deny_all, read_only, safe)`, err.Error())
}
