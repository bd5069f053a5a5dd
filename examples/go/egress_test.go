package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk"
	"github.com/govhost/govhost/sdk/gatecases"
)

// TestSharedCases runs the examples' shared cases natively through the Go
// SDK's JSON round trip (the Wasm build runs them with `make examples-test`).
// A configuration the gate refuses stands for the host's
// gate.config_rejected deny, as in Wasm.
func TestSharedCases(t *testing.T) {
	f, err := gatecases.LoadFile("../egress.cases.json")
	require.NoError(t, err)
	for _, c := range f.Cases {
		config := c.Config
		if len(config) == 0 {
			config = f.Config
		}
		var got abi.GateOutput
		if err := sdk.Configure(config); err != nil {
			got = abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: "gate.config_rejected"}
		} else {
			got = sdk.Evaluate(gatecases.Input(c, f.Gate))
		}
		require.Empty(t, gatecases.Compare(c.Want, got), "%s: got %+v", c.Name, got)
	}
}
