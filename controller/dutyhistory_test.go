package controller_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// TestDutyHistory_EachActorAndDutyOnce: a gate sees a task's duty history
// with each actor and duty once, in the order first performed, however
// often the actor repeats it — a long session's calls do not each carry
// (and encode) every call before them — and a task resumed from its chain
// rebuilds the same history.
func TestDutyHistory_EachActorAndDutyOnce(t *testing.T) {
	ctx := context.Background()
	seen := answer(abi.DecisionAllow, "ok")
	e := newEnv(t, []binding{hard("sod", seen)})
	actor := &governance.ActorRef{Kind: "agent", ID: "claude:s1"}
	task, err := e.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version(), Actor: actor})
	require.NoError(t, err)
	run := func(tool string) {
		args, _ := json.Marshal(map[string]string{"command": "ls"})
		p, err := task.Authorize(ctx, controller.Call{Tool: tool, Arguments: args})
		require.NoError(t, err)
		require.NoError(t, e.ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: task.ID()}))
	}
	for i := 0; i < 50; i++ {
		run("bash")
		run("read")
	}
	last := func() []abi.Assignment {
		calls := seen.calls()
		in := calls[len(calls)-1]
		require.NotNil(t, in.Context.Assignments)
		return *in.Context.Assignments
	}
	want := []abi.Assignment{
		{Actor: abi.ActorRef{Kind: "agent", ID: "claude:s1"}, Duty: "bash"},
		{Actor: abi.ActorRef{Kind: "agent", ID: "claude:s1"}, Duty: "read"},
	}
	require.Equal(t, want, last(), "100 completed calls of two tools: two entries")

	// A restarted server: a new controller on the same stores.
	after, err := controller.New(controller.Config{Evidence: e.store, Policies: e.policies,
		Gates: controller.GateProviderFunc(func(context.Context, governance.ExecutableGateBinding) (controller.Gate, error) {
			return seen, nil
		})})
	require.NoError(t, err)
	resumed, _, err := after.ResumeTask(ctx, task.ResumeOptions())
	require.NoError(t, err)
	args, _ := json.Marshal(map[string]string{"command": "ls"})
	_, err = resumed.Authorize(ctx, controller.Call{Tool: "bash", Arguments: args})
	require.NoError(t, err)
	require.Equal(t, want, last(), "the history rebuilt from the chain is the same")
}
