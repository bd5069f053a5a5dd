package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk"
)

func TestToolgate_Evaluate(t *testing.T) {
	require.NoError(t, sdk.Configure([]byte(`{"deny_tools":["web_fetch"],"approve_tools":["bash"],"allowed_roots":["/work"]}`)))
	cases := []struct {
		name string
		in   abi.GateInput
		want abi.Decision
		code string
	}{
		{"denied tool", abi.GateInput{Tool: "web_fetch"}, abi.DecisionDeny, ReasonToolDenied},
		{"approval", abi.GateInput{Tool: "bash"}, abi.DecisionRequireApproval, ReasonApproval},
		{"path inside", abi.GateInput{Tool: "read", Paths: []abi.PathFact{{Arg: "path", Resolved: "/work/a.txt"}}}, abi.DecisionAllow, ReasonAllowed},
		{"path outside", abi.GateInput{Tool: "read", Paths: []abi.PathFact{{Arg: "path", Resolved: "/workshop/a"}}}, abi.DecisionDeny, ReasonPathOutsideRoots},
		{"root itself", abi.GateInput{Tool: "read", Paths: []abi.PathFact{{Arg: "path", Resolved: "/work"}}}, abi.DecisionAllow, ReasonAllowed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Arguments = json.RawMessage(`{}`)
			out := sdk.Evaluate(c.in)
			require.Equal(t, c.want, out.Decision)
			require.Equal(t, c.code, out.ReasonCode)
			require.NoError(t, out.Validate())
		})
	}
}

func TestToolgate_Configure_RejectsRelativeRoot(t *testing.T) {
	require.Error(t, sdk.Configure([]byte(`{"allowed_roots":["work"]}`)))
	require.Error(t, sdk.Configure([]byte(`{"unknown":1}`)))
}
