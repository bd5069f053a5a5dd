package controller_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// issue 11 point 3, from AgentLane's evaluate_tool_permission: the text
// the agent sees after an approver answered is the deny text for a deny,
// the approval-required text for the original require_approval, and the
// decision's reason (verbatim) whenever it carries one.
func TestInvoke_TextAfterTheApproversAnswer(t *testing.T) {
	perm := builtinGate(t, "permission", `{"agentlane":{"side_effect_approval":{}}}`)
	const (
		approvalText = "approval required: write requires application approval for `/w/notes.txt` before execution"
		denyText     = "permission denied: write is not allowed for `/w/notes.txt`"
	)
	for _, tc := range []struct {
		name     string
		decision controller.ApprovalDecision
		want     string
	}{
		{"deny", controller.ApprovalDecision{Decision: abi.DecisionDeny}, denyText},
		{"the original approval decision", controller.ApprovalDecision{Decision: abi.DecisionRequireApproval}, approvalText},
		{"an unknown decision", controller.ApprovalDecision{Decision: "maybe"}, denyText},
		{"deny with a reason", controller.ApprovalDecision{Decision: abi.DecisionDeny, Reason: " not during the freeze "}, " not during the freeze "},
		{"approval again with a reason", controller.ApprovalDecision{Decision: abi.DecisionRequireApproval, Reason: "approval required: timed out"}, "approval required: timed out"},
		{"a blank reason is no reason", controller.ApprovalDecision{Decision: abi.DecisionDeny, Reason: " \t"}, denyText},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb := func(context.Context, controller.ApprovalRequest) (controller.ApprovalDecision, error) {
				return tc.decision, nil
			}
			e := newEnv(t, []binding{hard("perm", perm, "write")}, func(c *controller.Config) { c.Approvals = cb })
			require.NoError(t, e.m.Register(controller.Tool{ID: "write", Fn: e.echo}))
			_, err := invokeWrite(e)
			var de *governance.GovernanceDeniedError
			require.ErrorAs(t, err, &de)
			require.Equal(t, tc.want, de.Message)
			require.Equal(t, "rejected", e.payload(2)["approval"], "the approver was asked")
			require.Equal(t, controller.ReasonApprovalRequired, de.ReasonCode)
			require.Zero(t, e.calls.Load())
			for _, r := range e.records() {
				require.NotContains(t, r.PayloadJSON, "freeze", "the reason is shown to the agent, never recorded")
			}
		})
	}
	t.Run("no approver keeps the approval text", func(t *testing.T) {
		e := newEnv(t, []binding{hard("perm", perm, "write")})
		require.NoError(t, e.m.Register(controller.Tool{ID: "write", Fn: e.echo}))
		_, err := invokeWrite(e)
		var de *governance.GovernanceDeniedError
		require.ErrorAs(t, err, &de)
		require.Equal(t, approvalText, de.Message)
		require.Equal(t, "unavailable", e.payload(2)["approval"])
	})
	t.Run("a gate without a deny text", func(t *testing.T) {
		asks := answer(abi.DecisionRequireApproval, "x.ask")
		cb := func(context.Context, controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			return controller.ApprovalDecision{Decision: abi.DecisionDeny}, nil
		}
		e := newEnv(t, []binding{hard("x", asks, "bash")}, func(c *controller.Config) { c.Approvals = cb })
		_, err := e.invoke("bash", `{"command":"ls"}`)
		var de *governance.GovernanceDeniedError
		require.ErrorAs(t, err, &de)
		require.Equal(t, "permission denied: bash is not allowed", de.Message)
	})
}

func invokeWrite(e *env) (any, error) {
	return e.m.Invoke(context.Background(), controller.Call{Tool: "write", Operation: "create_file",
		Arguments: json.RawMessage(`{"path":"/w/notes.txt","content":"x"}`)}, e.opctx("write"))
}

// The broker carries a reason (and the rest of a decision) from the host
// that resolves a request.
func TestApprovalBroker_ResolveDecisionCarriesTheReason(t *testing.T) {
	perm := builtinGate(t, "permission", `{"agentlane":{"side_effect_approval":{}}}`)
	broker := controller.NewApprovalBroker(false)
	e := newEnv(t, []binding{hard("perm", perm, "write")}, func(c *controller.Config) { c.Approvals = broker.Callback() })
	require.NoError(t, e.m.Register(controller.Tool{ID: "write", Fn: e.echo}))
	done := make(chan error, 1)
	go func() {
		_, err := invokeWrite(e)
		done <- err
	}()
	var pending []controller.BrokeredApproval
	require.Eventually(t, func() bool { pending = broker.Pending(); return len(pending) == 1 }, 5*time.Second, time.Millisecond)
	require.False(t, broker.ResolveDecision("tool-approval-99", controller.ApprovalDecision{Decision: abi.DecisionDeny}))
	require.True(t, broker.ResolveDecision(pending[0].ID, controller.ApprovalDecision{Decision: abi.DecisionDeny, Reason: "ask Ana first",
		Approver: &governance.ActorRef{Kind: "user", ID: "bo"}}))
	err := <-done
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "ask Ana first", de.Message)
	p := e.payload(2)
	require.Equal(t, "bo", p["approver_id"])
	require.False(t, strings.Contains(e.records()[2].PayloadJSON, "Ana"))
}

// issue 11 point 6, AgentLane: "metadata is for app-defined correlation and
// is merged with context metadata, with request metadata winning on key
// conflicts"; run_id, agent_name and tool_call_id fall back to the
// context's when the request has none. Gates and approvers see the merge.
func TestTask_ContextMergesIntoEachCall(t *testing.T) {
	var seen []abi.OperationInfo
	gate := nativeGate(func(in abi.GateInput) abi.GateOutput {
		seen = append(seen, in.Context)
		return abi.GateOutput{Decision: abi.DecisionRequireApproval, ReasonCode: "x.ask", Message: "approval required"}
	})
	var asked []controller.ApprovalRequest
	cb := func(_ context.Context, req controller.ApprovalRequest) (controller.ApprovalDecision, error) {
		asked = append(asked, req)
		return controller.ApprovalDecision{Decision: abi.DecisionAllow}, nil
	}
	e := newEnv(t, []binding{hard("g", gate, "bash")}, func(c *controller.Config) { c.Approvals = cb })
	ctx := context.Background()
	ctxMeta := map[string]string{"tenant": "acme", "ticket": "from-context"}
	task, err := e.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version(), Context: controller.ExecutionContext{
		RunID: "run-ctx", AgentName: "agent-ctx", ToolCallID: "call-ctx", Metadata: ctxMeta,
	}})
	require.NoError(t, err)
	ctxMeta["tenant"] = "changed later" // the task keeps its own copy
	reqMeta := map[string]string{"ticket": "from-request", "trace": "t-9"}
	call := controller.Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"ls"}`), RunID: "run-req", Metadata: reqMeta}

	opctx, err := task.Context("bash")
	require.NoError(t, err)
	_, err = e.m.Invoke(ctx, call, &opctx)
	require.NoError(t, err)
	_, err = task.Authorize(ctx, call)
	require.NoError(t, err)

	want := abi.OperationInfo{RunID: "run-req", AgentName: "agent-ctx", ToolCallID: "call-ctx",
		Metadata: map[string]string{"tenant": "acme", "ticket": "from-request", "trace": "t-9"}}
	require.Len(t, seen, 2)
	for _, got := range seen {
		got.OperationID, got.Actor, got.Assignments = "", nil, nil // the duty history has its own test
		require.Equal(t, want, got)
	}
	require.Len(t, asked, 2)
	for _, req := range asked {
		require.Equal(t, want.Metadata, req.Metadata)
		require.Equal(t, []string{"run-req", "agent-ctx", "call-ctx"}, []string{req.RunID, req.AgentName, req.ToolCallID})
	}
	require.Equal(t, map[string]string{"ticket": "from-request", "trace": "t-9"}, reqMeta, "the call's own map is not modified")

	res, err := controller.DryRun(ctx, controller.GateProviderFunc(func(context.Context, governance.ExecutableGateBinding) (controller.Gate, error) {
		return gate, nil
	}), e.snap, call, controller.DryRunOptions{Context: controller.ExecutionContext{AgentName: "dry", Metadata: map[string]string{"tenant": "t"}}})
	require.NoError(t, err)
	require.Equal(t, abi.DecisionRequireApproval, res.Decision)
	last := seen[len(seen)-1]
	require.Equal(t, "dry", last.AgentName)
	require.Equal(t, map[string]string{"tenant": "t", "ticket": "from-request", "trace": "t-9"}, last.Metadata)
}
