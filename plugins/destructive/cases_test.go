package destructive_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/destructive"
)

// caseFile is the shape of testdata/cases.json, shared with the .wasm runner.
type caseFile struct {
	Gate  string     `json:"gate"`
	Cases []gateCase `json:"cases"`
}

type gateCase struct {
	Name   string          `json:"name"`
	Source string          `json:"source,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`
	Input  abi.GateInput   `json:"input"`
	Want   struct {
		Decision    abi.Decision `json:"decision"`
		ReasonCode  string       `json:"reason_code"`
		Message     *string      `json:"message,omitempty"`
		Detail      *string      `json:"detail,omitempty"`
		MatchedRule *string      `json:"matched_rule,omitempty"`
	} `json:"want"`
}

func loadCases(t testing.TB) caseFile {
	t.Helper()
	raw, err := os.ReadFile("testdata/cases.json")
	require.NoError(t, err)
	var f caseFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.Equal(t, "destructive", f.Gate)
	require.NotEmpty(t, f.Cases)
	return f
}

func TestGate_Evaluate_Cases(t *testing.T) {
	for _, tc := range loadCases(t).Cases {
		t.Run(tc.Name, func(t *testing.T) {
			g, err := destructive.New(tc.Config)
			require.NoError(t, err)
			got := g.Evaluate(tc.Input)
			require.Equal(t, tc.Want.Decision, got.Decision, "reason %s", got.ReasonCode)
			require.Equal(t, tc.Want.ReasonCode, got.ReasonCode)
			if tc.Want.Message != nil {
				require.Equal(t, *tc.Want.Message, got.Message)
			}
			if tc.Want.Detail != nil {
				require.Equal(t, *tc.Want.Detail, got.Detail)
			}
			if tc.Want.MatchedRule != nil {
				require.Equal(t, *tc.Want.MatchedRule, got.MatchedRule)
			}
			if got.Decision == abi.DecisionAllow {
				require.Empty(t, got.Message)
			}
		})
	}
}
