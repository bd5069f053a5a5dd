package policyfile_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/policy/policyfile"
)

// permissionPolicy is a policy file whose LionAGI rule maps hold aliases of
// one tool in an order that changes the answer (ADR-0086 D1: keys are
// normalised at construction, the later entry replaces the earlier, in the
// order the author wrote them). Sorted, "bash" would come before
// "bash_tool" in both maps and the answers would swap.
const permissionPolicy = `{
  "policy_id": "6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01",
  "version": "1",
  "gates": [
    {"gate_id": "perm", "module": "permission", "level": "hard", "order": 1, "tool_ids": ["bash"],
     "config": {"lionagi": {"mode": "rules",
        "deny":  {"bash_tool": ["rm *"], "bash": ["sudo *"]},
        "allow": {"bash_tool": ["*"], "BASH": ["git *", "ls"]}}}}
  ]
}`

func TestLoad_PermissionRuleMapsKeepDocumentOrder(t *testing.T) {
	builtins := func(name string) ([]byte, bool) { return []byte("\x00asm\x01\x00\x00\x00" + name), true }
	snap, err := policyfile.Load([]byte(permissionPolicy), "p.json", policyfile.FileResolver(t.TempDir(), builtins))
	require.NoError(t, err)
	cfg := snap.GateBinding(0).Config()
	require.Equal(t, `{"lionagi":{"allow":[{"patterns":["*"],"tool":"bash_tool"},{"patterns":["git *","ls"],"tool":"BASH"}],`+
		`"deny":[{"patterns":["rm *"],"tool":"bash_tool"},{"patterns":["sudo *"],"tool":"bash"}],"mode":"rules"}}`, cfg)

	g, err := gatetest.Builtin(context.Background(), "permission", []byte(cfg))
	require.NoError(t, err)
	defer g.Close()
	for _, tc := range []struct {
		command, decision, rule string
	}{
		{"sudo x", "deny", "sudo *"},     // the later "bash" deny list replaced "bash_tool"'s
		{"rm -rf /", "deny", ""},         // so rm is not denied, and the later allow list lacks it
		{"git status", "allow", "git *"}, // the later "BASH" allow list decides
		{"make", "deny", ""},             // "bash_tool": ["*"] was replaced
	} {
		args, _ := json.Marshal(map[string]string{"command": tc.command})
		out := g.Evaluate(abi.GateInput{Tool: "bash", Action: "run", Arguments: args})
		require.Equal(t, tc.decision, string(out.Decision), tc.command)
		require.Equal(t, tc.rule, out.MatchedRule, tc.command)
	}
}

func TestGateConfig(t *testing.T) {
	for _, tc := range []struct{ module, in, want string }{
		{"permission", `{"lionagi":{"deny":{"b":[],"a":["x"]}}}`, `{"lionagi":{"deny":{"a":["x"],"b":[]}}}`},
		{"permission", `{"lionagi":{"deny":{"bash_tool":[],"BASH":["x"]}}}`, `{"lionagi":{"deny":[{"patterns":[],"tool":"bash_tool"},{"patterns":["x"],"tool":"BASH"}]}}`},
		{"permission", `{"lionagi":{"deny":{"x":[],"Reader_Tool":["y"],"reader":[]}}}`, `{"lionagi":{"deny":[{"patterns":[],"tool":"x"},{"patterns":["y"],"tool":"Reader_Tool"},{"patterns":[],"tool":"reader"}]}}`},
		{"permission", `{"lionagi":{"allow":{"ß":["1"],"a":[]}}}`, `{"lionagi":{"allow":[{"patterns":["1"],"tool":"ß"},{"patterns":[],"tool":"a"}]}}`},
		{"permission", `{"lionagi":{"deny":{"a":["1"],"b":[],"a":["2"]}}}`, `{"lionagi":{"deny":{"a":["2"],"b":[]}}}`},
		{"permission", `{"preset":"safe"}`, `{"preset":"safe"}`},
		{"permission", `{"lionagi":"safe"}`, `{"lionagi":"safe"}`},
		{"permission", `{"lionagi":{"deny":"x","mode":"rules"}}`, `{"lionagi":{"deny":"x","mode":"rules"}}`},
		{"permission", `{"agentlane":{"grants":"read"}}`, `{"agentlane":{"grants":"read"}}`},
		{"pathguard", `{"lionagi":{"deny":{"b":[],"a":[]}}}`, `{"lionagi":{"deny":{"a":[],"b":[]}}}`},
		{"gates/x.wasm", `{"z":1,"a":2}`, `{"a":2,"z":1}`},
	} {
		got, err := policyfile.GateConfig(tc.module, json.RawMessage(tc.in))
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{`{"lionagi":{"deny":{"a":[1.5]}}}`, `{"lionagi":`, `[1,2`} {
		_, err := policyfile.GateConfig("permission", json.RawMessage(bad))
		require.Error(t, err, bad)
	}
}
