package controller_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// AgentLane's ToolApprovalBroker(record_immediate_decisions=True) returns
// an immediate allow or deny as it was given — reason text and all — and
// its pending and resolved events carry that decision; without the flag
// the broker refuses it before consuming an id.
func TestApprovalBroker_ImmediateDecisionKeepsItsReason(t *testing.T) {
	const reason = "  blocked by the host: change freeze until Monday  " // verbatim: not trimmed
	off := controller.NewApprovalBroker(false)
	offEvents, cancelOff := off.Events()
	defer cancelOff()
	_, err := off.DecideWith(context.Background(), controller.ApprovalRequest{Tool: "write"}, controller.ApprovalDecision{Decision: abi.DecisionDeny, Reason: reason})
	require.ErrorIs(t, err, controller.ErrBrokerOnlyApprovals)
	go func() {
		_, _ = off.Decide(context.Background(), controller.ApprovalRequest{Tool: "write"}, abi.DecisionRequireApproval)
	}()
	ev := next(t, offEvents)
	require.Equal(t, "tool-approval-1", ev.Approval.ID, "the refused decision consumed no id and emitted nothing")
	require.True(t, off.Resolve("tool-approval-1", abi.DecisionDeny, nil))

	b := controller.NewApprovalBroker(true)
	events, cancel := b.Events()
	defer cancel()
	for i, d := range []controller.ApprovalDecision{
		{Decision: abi.DecisionDeny, Reason: reason},
		{Decision: abi.DecisionAllow, Reason: "allowed by the release manager"},
	} {
		got, err := b.DecideWith(context.Background(), controller.ApprovalRequest{Tool: "write"}, d)
		require.NoError(t, err)
		require.Equal(t, d.Decision, got.Decision)
		require.Equal(t, d.Reason, got.Reason)
		require.False(t, got.DecidedAt.IsZero())

		pending := next(t, events)
		require.Equal(t, controller.ApprovalPending, pending.Kind)
		require.Equal(t, d.Decision, pending.Approval.Required)
		require.Equal(t, d.Reason, pending.Approval.RequiredReason)
		resolved := next(t, events)
		require.Equal(t, controller.ApprovalResolved, resolved.Kind)
		require.Equal(t, pending.Approval.ID, resolved.Approval.ID)
		require.Equal(t, []string{"tool-approval-1", "tool-approval-2"}[i], resolved.Approval.ID)
		require.Equal(t, got, *resolved.Approval.Final)
	}
	require.Empty(t, b.Pending())
}

// End to end through the controller: an application whose approval
// callback answers at once through a recording broker (a host policy that
// denies, with its own words) has the agent shown exactly those words, and
// nothing of them is recorded in evidence.
func TestInvoke_ImmediateBrokerDecision_AgentSeesItsReason(t *testing.T) {
	perm := builtinGate(t, "permission", `{"agentlane":{"side_effect_approval":{}}}`)
	const reason = " writes are frozen for the release; ask in #release "
	b := controller.NewApprovalBroker(true)
	events, cancel := b.Events()
	defer cancel()
	cb := func(ctx context.Context, req controller.ApprovalRequest) (controller.ApprovalDecision, error) {
		return b.DecideWith(ctx, req, controller.ApprovalDecision{Decision: abi.DecisionDeny, Reason: reason})
	}
	e := newEnv(t, []binding{hard("perm", perm, "write")}, func(c *controller.Config) { c.Approvals = cb })
	require.NoError(t, e.m.Register(controller.Tool{ID: "write", Fn: e.echo}))
	_, err := invokeWrite(e)
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de)
	require.Equal(t, reason, de.Message)
	require.Zero(t, e.calls.Load())
	require.Equal(t, controller.ApprovalPending, next(t, events).Kind)
	resolved := next(t, events)
	require.Equal(t, "write", resolved.Approval.Request.Tool)
	require.Equal(t, reason, resolved.Approval.Final.Reason)
	for _, r := range e.records() {
		require.NotContains(t, r.PayloadJSON, "frozen", "the reason is shown to the agent, never recorded")
	}
}
