package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// codedFailure is a gate failure that carries its own reason code, as the
// host's GuestError does.
type codedFailure struct{ code string }

func (f codedFailure) Error() string      { return "guest failed: " + f.code }
func (f codedFailure) ReasonCode() string { return f.code }

// A dry run (govhost eval) reports a failing gate with the failure's own
// code (gate.timeout), and control.evaluator_error for an error without one.
func TestDryRun_GateFailureKeepsItsCode(t *testing.T) {
	e := newEnv(t, []binding{hard("slow", answer(abi.DecisionAllow, "ok"), "bash")})
	call := controller.Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{codedFailure{"gate.timeout"}, "gate.timeout"},
		{errors.Join(errors.New("wrapped"), codedFailure{"gate.trap"}), "gate.trap"},
		{errors.New("no code"), controller.ReasonEvaluatorError},
	} {
		provider := controller.GateProviderFunc(func(context.Context, governance.ExecutableGateBinding) (controller.Gate, error) {
			return failingGate{tc.err}, nil
		})
		res, err := controller.DryRun(context.Background(), provider, e.snap, call, controller.DryRunOptions{})
		require.NoError(t, err)
		require.Equal(t, abi.DecisionDeny, res.Decision)
		require.Equal(t, tc.want, res.ReasonCode)
		require.ErrorIs(t, res.Gates[0].Err, tc.err)
	}
}

type failingGate struct{ err error }

func (g failingGate) Evaluate(context.Context, abi.GateInput) (abi.GateOutput, error) {
	return abi.GateOutput{}, g.err
}
