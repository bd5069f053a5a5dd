package controller_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

func waitPending(t *testing.T, b *controller.ApprovalBroker, n int) []controller.BrokeredApproval {
	t.Helper()
	require.Eventually(t, func() bool { return len(b.Pending()) == n }, 5*time.Second, time.Millisecond)
	return b.Pending()
}

func next(t *testing.T, ch <-chan controller.BrokerEvent) controller.BrokerEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		require.True(t, ok, "stream ended")
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return controller.BrokerEvent{}
}

func TestApprovalBroker_PendingResolveAndEvents(t *testing.T) {
	b := controller.NewApprovalBroker(false)
	events, cancel := b.Events()
	defer cancel()
	results := make(chan controller.ApprovalDecision, 2)
	for _, tool := range []string{"bash", "write"} {
		go func() {
			d, err := b.Decide(context.Background(), controller.ApprovalRequest{Tool: tool}, abi.DecisionRequireApproval)
			require.NoError(t, err)
			results <- d
		}()
		waitPending(t, b, map[string]int{"bash": 1, "write": 2}[tool])
	}
	p := b.Pending()
	require.Equal(t, "tool-approval-1", p[0].ID)
	require.Equal(t, "bash", p[0].Request.Tool)
	require.Equal(t, "tool-approval-2", p[1].ID)
	require.Equal(t, controller.ApprovalPending, p[0].Status)

	ev := next(t, events)
	require.Equal(t, controller.ApprovalPending, ev.Kind)
	require.Equal(t, "tool-approval-1", ev.Approval.ID)
	next(t, events)

	require.False(t, b.Resolve("tool-approval-9", abi.DecisionAllow, nil), "unknown id")
	require.True(t, b.Resolve("tool-approval-2", abi.DecisionDeny, &governance.ActorRef{Kind: "user", ID: "rev"}))
	require.False(t, b.Resolve("tool-approval-2", abi.DecisionAllow, nil), "already resolved")
	d := <-results
	require.Equal(t, abi.DecisionDeny, d.Decision)
	require.Equal(t, "rev", d.Approver.ID)
	ev = next(t, events)
	require.Equal(t, controller.ApprovalResolved, ev.Kind)
	require.Equal(t, abi.DecisionDeny, ev.Approval.Final.Decision)

	// A late subscriber sees no replay.
	late, cancelLate := b.Events()
	defer cancelLate()
	require.True(t, b.Resolve("tool-approval-1", abi.DecisionAllow, nil))
	require.Equal(t, abi.DecisionAllow, (<-results).Decision)
	require.Equal(t, "tool-approval-1", next(t, late).Approval.ID)
	require.Empty(t, b.Pending())
}

func TestApprovalBroker_ImmediateDecisions(t *testing.T) {
	b := controller.NewApprovalBroker(false)
	_, err := b.Decide(context.Background(), controller.ApprovalRequest{}, abi.DecisionAllow)
	require.ErrorIs(t, err, controller.ErrBrokerOnlyApprovals)

	rec := controller.NewApprovalBroker(true)
	events, cancel := rec.Events()
	defer cancel()
	d, err := rec.Decide(context.Background(), controller.ApprovalRequest{Tool: "read"}, abi.DecisionDeny)
	require.NoError(t, err)
	require.Equal(t, abi.DecisionDeny, d.Decision)
	require.Equal(t, controller.ApprovalPending, next(t, events).Kind)
	ev := next(t, events)
	require.Equal(t, controller.ApprovalResolved, ev.Kind)
	require.Equal(t, "tool-approval-1", ev.Approval.ID)
	require.Empty(t, rec.Pending())
}

func TestApprovalBroker_CancelAndClose(t *testing.T) {
	b := controller.NewApprovalBroker(false)
	events, _ := b.Events()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Decide(ctx, controller.ApprovalRequest{}, abi.DecisionRequireApproval)
		errc <- err
	}()
	waitPending(t, b, 1)
	next(t, events)
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	require.Empty(t, b.Pending())
	require.False(t, b.Resolve("tool-approval-1", abi.DecisionAllow, nil))

	// Close ends streams but leaves pending requests resolvable.
	done := make(chan controller.ApprovalDecision, 1)
	go func() {
		d, _ := b.Decide(context.Background(), controller.ApprovalRequest{}, abi.DecisionRequireApproval)
		done <- d
	}()
	waitPending(t, b, 1)
	b.Close()
	b.Close()
	for range events {
	}
	after, _ := b.Events()
	_, open := <-after
	require.False(t, open)
	require.True(t, b.Resolve("tool-approval-2", abi.DecisionAllow, nil))
	require.Equal(t, abi.DecisionAllow, (<-done).Decision)
}

func TestInvoke_BrokerApprovesThroughController(t *testing.T) {
	b := controller.NewApprovalBroker(false)
	e := newEnv(t, []binding{hard("perm", answer(abi.DecisionRequireApproval, "permission.escalate"))}, func(c *controller.Config) { c.Approvals = b.Callback() })
	errc := make(chan error, 1)
	go func() {
		_, err := e.invoke("bash", `{"command":"make deploy"}`)
		errc <- err
	}()
	p := waitPending(t, b, 1)
	require.Equal(t, "bash", p[0].Request.Tool)
	require.Equal(t, "permission.escalate", p[0].Request.ReasonCode)
	require.JSONEq(t, `{"command":"make deploy"}`, string(p[0].Request.Arguments))
	require.True(t, b.Resolve(p[0].ID, abi.DecisionAllow, &governance.ActorRef{Kind: "user", ID: "lead"}))
	require.NoError(t, <-errc)
	require.Equal(t, "lead", e.payload(2)["approver_id"])
}
