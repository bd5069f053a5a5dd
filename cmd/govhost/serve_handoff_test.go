package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
)

// TestServe_ApprovalGoesPendingWhilePlainCallsAnswerAtOnce runs the
// default install: a call the default policy holds for an approver
// answers pending and is decided later, while plain calls in the same
// task are answered at once; a held call whose client gave up waiting
// is still decided by its approver and recorded; the task then certifies.
func TestServe_ApprovalGoesPendingWhilePlainCallsAnswerAtOnce(t *testing.T) {
	s := startServe(t, t.TempDir())
	ctx := context.Background()
	ws := t.TempDir()
	task, err := s.client.OpenTask(ctx, api.OpenTaskRequest{Workspace: ws})
	require.NoError(t, err)
	bash := func(command string, waitMS int64) api.AuthorizeRequest {
		return api.AuthorizeRequest{WaitMS: waitMS, CallRequest: api.CallRequest{
			Tool: "bash", Arguments: json.RawMessage(`{"command":"` + command + `"}`), AgentName: "coder"}}
	}

	held, err := s.client.Authorize(ctx, task.TaskID, bash("make release", 0))
	require.NoError(t, err)
	require.Equal(t, api.DecisionPending, held.Decision)
	require.NotEmpty(t, held.ApprovalID)

	// While it waits, plain calls are answered in their own request.
	read, err := s.client.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{
		Tool: "read", Arguments: json.RawMessage(`{"path":"` + filepath.Join(ws, "README.md") + `"}`)}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, read.Decision)
	require.NoError(t, s.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: read.Permit.PermitID}))
	denied, err := s.client.Authorize(ctx, task.TaskID, bash("rm -rf /", 0))
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, denied.Decision)
	require.Equal(t, "destructive.rm_recursive_force", denied.Denial.ReasonCode)

	// A second held call whose client stops waiting before anyone answers.
	gone, leave := context.WithCancel(ctx)
	answered := make(chan error, 1)
	go func() {
		_, err := s.client.Authorize(gone, task.TaskID, bash("make publish", 60000))
		answered <- err
	}()
	var abandoned api.Approval
	require.Eventually(t, func() bool {
		pending, err := s.client.Approvals(ctx)
		require.NoError(t, err)
		for _, p := range pending {
			if strings.Contains(string(p.Arguments), "make publish") {
				abandoned = p
				return true
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond)
	leave()
	require.ErrorContains(t, <-answered, "context canceled")

	// The approvers answer later: the first call gets its permit, the
	// abandoned one its recorded rejection.
	pending, err := s.client.Approvals(ctx)
	require.NoError(t, err)
	require.Len(t, pending, 2, "both held calls still wait for their approver")
	alice := &governance.ActorRef{Kind: "user", ID: "alice"}
	bob := &governance.ActorRef{Kind: "user", ID: "bob"}
	require.NoError(t, s.client.ResolveApproval(ctx, held.ApprovalID, api.ResolveApprovalRequest{Decision: "allow", Approver: alice}))
	require.NoError(t, s.client.ResolveApproval(ctx, abandoned.ApprovalID, api.ResolveApprovalRequest{Decision: "deny", Approver: bob}))
	done, err := s.client.Wait(ctx, held.AuthorizationID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, done.Decision)
	require.NoError(t, s.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: done.Permit.PermitID}))

	var chain strings.Builder
	require.Eventually(t, func() bool {
		chain.Reset()
		require.NoError(t, s.client.ExportChain(ctx, task.ChainID, &chain))
		return strings.Contains(chain.String(), `\"approver_id\":\"bob\"`)
	}, time.Minute, 10*time.Millisecond, "the abandoned call's rejection is recorded")
	require.Contains(t, chain.String(), `\"approval\":\"approved\",\"approval_decided_at\"`)
	require.Contains(t, chain.String(), `\"approver_id\":\"alice\"`)
	require.Contains(t, chain.String(), `\"approval\":\"rejected\"`)
	closed, err := s.client.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
	require.Empty(t, closed.UnfinishedOperations, "every call has its terminal record")
	cert, err := s.client.Mint(ctx, closed.ChainID, closed.Head)
	require.NoError(t, err)
	require.Equal(t, governance.GradeFull, cert.Certificate.ProcessGrade)
}
