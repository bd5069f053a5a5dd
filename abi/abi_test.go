package abi

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPackPtrLen_RoundTrip(t *testing.T) {
	for _, c := range [][2]uint32{{0, 0}, {1, 2}, {0xffffffff, 0xffffffff}, {65536, 17}} {
		p, l := UnpackPtrLen(PackPtrLen(c[0], c[1]))
		require.Equal(t, c[0], p)
		require.Equal(t, c[1], l)
	}
}

func TestValidReasonCode(t *testing.T) {
	for code, ok := range map[string]bool{
		"gate.trap": true, "a": true, "destructive.rm_recursive_force": true, "x-1.y_2": true,
		"": false, ".a": false, "A.b": false, "a b": false, "a\n": false,
		string(make([]byte, MaxReasonCodeLen+1)): false,
	} {
		require.Equal(t, ok, ValidReasonCode(code), code)
	}
}

func TestGateOutput_Validate(t *testing.T) {
	ok := GateOutput{Decision: DecisionAllow, ReasonCode: "a.b"}
	require.NoError(t, ok.Validate())
	bad := ok
	bad.Decision = "maybe"
	require.ErrorIs(t, bad.Validate(), ErrBadDecision)
	bad = ok
	bad.ReasonCode = ""
	require.ErrorIs(t, bad.Validate(), ErrBadReasonCode)
	bad = ok
	bad.Arguments = json.RawMessage(`[1]`)
	require.ErrorIs(t, bad.Validate(), ErrBadArguments)
	good := ok
	good.Arguments = json.RawMessage(` {"a":1}`)
	require.NoError(t, good.Validate())
	good.Arguments = json.RawMessage(`null`)
	require.NoError(t, good.Validate())
}
