package abi_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
)

// TestAssignments_CodecMatchesEncodingJSON: the duty history is absent
// (nil), empty or a list, and the reflection-free codec writes and reads
// each exactly as encoding/json does.
func TestAssignments_CodecMatchesEncodingJSON(t *testing.T) {
	two := []abi.Assignment{{Actor: abi.ActorRef{Kind: "user", ID: "ann"}, Duty: "write"}, {Actor: abi.ActorRef{Kind: "agent", ID: "b\"x"}, Duty: "merge"}}
	empty := []abi.Assignment{}
	for name, list := range map[string]*[]abi.Assignment{"absent": nil, "empty": &empty, "two": &two} {
		t.Run(name, func(t *testing.T) {
			in := abi.GateInput{ABIVersion: abi.Version, GateID: "duties", Phase: abi.PhaseCheck, Tool: "merge",
				Arguments: json.RawMessage(`{}`), Context: abi.OperationInfo{OperationID: "op", Assignments: list}}
			got, err := abi.AppendGateInput(nil, &in)
			require.NoError(t, err)
			want, err := json.Marshal(in)
			require.NoError(t, err)
			require.JSONEq(t, string(want), string(got))
			var back abi.GateInput
			require.NoError(t, abi.DecodeGateInput(got, &back))
			require.Equal(t, list, back.Context.Assignments)
		})
	}
}
