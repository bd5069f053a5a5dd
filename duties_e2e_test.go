package govhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/policyfile"
)

// TestDuties_HistoryFromCommittedEvidence: the built-in duties module
// (Wasm, hard) gets each task's duty history from the controller — who
// completed which tool in this task — and denies the writer the merge;
// another actor may merge; an operation outside a task has no history
// and is denied. The task still certifies FULL and verifies offline.
func TestDuties_HistoryFromCommittedEvidence(t *testing.T) {
	ctx := context.Background()
	eng, err := govhost.Open(ctx, withCache(govhost.Options{Dir: t.TempDir()}))
	require.NoError(t, err)
	defer eng.Close(ctx)
	doc := fmt.Sprintf(`{"policy_id": %q, "version": "sod-1", "gates": [
	  {"gate_id": "duties", "module": "duties", "level": "hard", "order": 1, "tool_ids": ["write", "merge"],
	   "config": {"incompatible": {"merge": ["write"]}}}]}`, uuid.New())
	snap, err := policyfile.Load([]byte(doc), "policy.json", eng.Gates.Resolver("."))
	require.NoError(t, err)
	require.NoError(t, eng.Policies.Put(ctx, snap))
	snap, err = eng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), nil, time.Now())
	require.NoError(t, err)
	ctl, err := eng.NewController(controller.Config{})
	require.NoError(t, err)
	m := controller.NewManager()
	ok := func(context.Context, map[string]any) (any, error) { return "ok", nil }
	require.NoError(t, m.Register(controller.Tool{ID: "write", Fn: ok}))
	require.NoError(t, m.Register(controller.Tool{ID: "merge", Fn: ok}))
	pin := controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}
	require.NoError(t, m.Govern(ctl, pin))

	ann, bob := governance.ActorRef{Kind: "user", ID: "ann"}, governance.ActorRef{Kind: "user", ID: "bob"}
	call := func(task *controller.Task, tool string) error {
		opctx, err := task.Context(tool)
		require.NoError(t, err)
		_, err = m.Invoke(ctx, controller.Call{Tool: tool, Arguments: json.RawMessage(`{}`)}, &opctx)
		return err
	}
	reason := func(err error) string {
		var de *governance.GovernanceDeniedError
		if errors.As(err, &de) {
			return de.ReasonCode
		}
		return fmt.Sprint(err)
	}
	boundary, err := controller.RunTask(ctx, ctl, controller.TaskOptions{PolicyID: pin.PolicyID, Version: pin.Version, Actor: &ann}, func(task *controller.Task) error {
		require.NoError(t, call(task, "merge"), "nothing written yet")
		require.NoError(t, call(task, "write"))
		require.Equal(t, "duties.conflict", reason(call(task, "merge")), "ann wrote: ann may not merge")
		return nil
	})
	require.NoError(t, err)
	_, err = controller.RunTask(ctx, ctl, controller.TaskOptions{PolicyID: pin.PolicyID, Version: pin.Version, Actor: &bob}, func(task *controller.Task) error {
		require.NoError(t, call(task, "merge"), "bob's task has its own history")
		return nil
	})
	require.NoError(t, err)

	// Outside a task: no history, denied.
	outside, err := governance.NewOperationContext(governance.OperationContext{
		OperationID: uuid.New(), ChainID: uuid.New(), TaskBoundaryID: uuid.New(), ToolID: "merge", Actor: &ann,
		PolicyID: snap.PolicyID(), PolicyVersion: snap.Version(), PolicyDigest: snap.Digest(), StartedAt: time.Now(),
	})
	require.NoError(t, err)
	_, err = m.Invoke(ctx, controller.Call{Tool: "merge", Arguments: json.RawMessage(`{}`)}, &outside)
	require.Equal(t, "duties.no_history", reason(err))

	b, err := eng.Bundle(ctx, boundary.TaskBoundaryID)
	require.NoError(t, err)
	require.Equal(t, governance.GradeFull, b.Certificate.ProcessGrade)
	require.Equal(t, 1, b.Certificate.GateSummary.HardDeny)
	rep := certify.Verify(b, certify.VerifyOptions{})
	require.True(t, rep.Valid, "%+v", rep)
}
