package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/server/client"
	"github.com/govhost/govhost/service"
)

// operationRecords returns the records of operation op in chain, with
// their payloads decoded.
func (e *env) operationRecords(chain, op uuid.UUID) ([]governance.EvidenceType, []map[string]any) {
	e.t.Helper()
	recs, err := e.eng.Evidence.Read(context.Background(), chain, -1)
	require.NoError(e.t, err)
	var types []governance.EvidenceType
	var payloads []map[string]any
	for _, r := range recs {
		if !r.OperationID.Valid || r.OperationID.UUID != op {
			continue
		}
		var p map[string]any
		require.NoError(e.t, json.Unmarshal([]byte(r.PayloadJSON), &p))
		types = append(types, r.RecordType)
		payloads = append(payloads, p)
	}
	return types, payloads
}

// TestAuthorize_ClientGoneBeforeTheApproval: a request that waits for an
// approver and whose client goes away before the approver answers leaves
// its authorization running: the approver still sees it, and their later
// decision is recorded in the task's chain (an approval gives a permit
// that waits for its completion, a rejection a recorded denial).
func TestAuthorize_ClientGoneBeforeTheApproval(t *testing.T) {
	e := sharedEnv(t)
	c, ctx := e.client, context.Background()
	for _, decision := range []string{"allow", "deny"} {
		t.Run(decision, func(t *testing.T) {
			e.t = t
			task, err := c.OpenTask(ctx, api.OpenTaskRequest{})
			require.NoError(t, err)
			command := "go test ./handoff/" + decision + "/..."
			gone, leave := context.WithCancel(ctx)
			answered := make(chan error, 1)
			go func() {
				_, err := c.Authorize(gone, task.TaskID, api.AuthorizeRequest{WaitMS: 60000, CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": command})}})
				answered <- err
			}()
			held := waitForApproval(t, e, command)
			leave()
			err = <-answered
			require.ErrorIs(t, err, client.ErrUnreachable)
			require.ErrorContains(t, err, "context canceled", "the client went away before the approver answered")

			// The approver answers after the request is gone.
			types, _ := e.operationRecords(task.ChainID, held.OperationID)
			require.Equal(t, []governance.EvidenceType{governance.PolicyBound, governance.OperationStarted, governance.GateEvaluated}, types, "what came before the wait is in the chain")
			reviewer := &governance.ActorRef{Kind: "user", ID: "reviewer-" + decision}
			require.NoError(t, c.ResolveApproval(ctx, held.ApprovalID, api.ResolveApprovalRequest{Decision: decision, Approver: reviewer}))

			want := []governance.EvidenceType{governance.PolicyBound, governance.OperationStarted, governance.GateEvaluated, governance.GateEvaluated}
			if decision == "deny" {
				want = []governance.EvidenceType{governance.PolicyBound, governance.OperationStarted, governance.GateEvaluated, governance.GateEvaluated, governance.OperationDenied}
			}
			var payloads []map[string]any
			require.Eventually(t, func() bool {
				types, payloads = e.operationRecords(task.ChainID, held.OperationID)
				return len(types) == len(want)
			}, 10*time.Second, 5*time.Millisecond, "the decision is recorded without the request")
			types, payloads = e.operationRecords(task.ChainID, held.OperationID)
			require.Equal(t, want, types)
			var asked map[string]any
			for _, p := range payloads {
				if p["gate_decision"] == "require_approval" {
					asked = p
				}
			}
			require.NotNil(t, asked, "the asking gate's record")
			require.Equal(t, map[string]string{"allow": "approved", "deny": "rejected"}[decision], asked["approval"])
			require.Equal(t, reviewer.ID, asked["approver_id"])

			closed, err := c.CloseTask(ctx, task.TaskID)
			require.NoError(t, err)
			if decision == "allow" {
				require.Equal(t, []uuid.UUID{held.OperationID}, closed.UnfinishedOperations, "its permit waits for a completion nobody will send")
			} else {
				require.Empty(t, closed.UnfinishedOperations, "a recorded denial is finished")
			}
		})
	}
}

// waitForApproval waits until the approval of the call with command is
// pending, and returns it.
func waitForApproval(t *testing.T, e *env, command string) api.Approval {
	t.Helper()
	var found api.Approval
	require.Eventually(t, func() bool {
		pending, err := e.client.Approvals(context.Background())
		require.NoError(t, err)
		for _, p := range pending {
			var a map[string]any
			if json.Unmarshal(p.Arguments, &a) == nil && a["command"] == command {
				found = p
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	return found
}

// TestAuthorize_DecidedWhateverTheRequestsContext: a call decided without
// an approver is decided in its request's goroutine, but not stopped by
// its request's cancellation: it is decided and recorded to the end, as
// one that waits for an approver is.
func TestAuthorize_DecidedWhateverTheRequestsContext(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	task, err := e.client.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	gone, leave := context.WithCancel(ctx)
	leave()
	res, err := e.svc.Authorize(gone, task.TaskID, controller.Call{Tool: "reader", Arguments: args(map[string]any{"path": "README.md"})}, 0)
	require.NoError(t, err)
	require.Equal(t, service.DecisionAllow, res.Decision)
	types, _ := e.operationRecords(task.ChainID, res.Permit.OperationID)
	require.Equal(t, []governance.EvidenceType{governance.PolicyBound, governance.OperationStarted, governance.GateEvaluated}, types)

	res, err = e.svc.Authorize(gone, task.TaskID, controller.Call{Tool: "bash", Arguments: args(map[string]any{"command": "rm -rf /"})}, 0)
	require.NoError(t, err)
	require.Equal(t, service.DecisionDeny, res.Decision)
	require.Equal(t, "destructive.rm_recursive_force", res.Denial.ReasonCode)
	op, err := uuid.Parse(res.Denial.OperationID)
	require.NoError(t, err)
	types, _ = e.operationRecords(task.ChainID, op)
	require.Equal(t, governance.OperationDenied, types[len(types)-1])
	_, err = e.client.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
}

// TestAuthorize_ConcurrentApprovalsFindTheirAuthorizations: 16 clients
// each hold one call for an approver and make plain calls meanwhile; the
// approvers answer every held call (allow for even ones, deny for odd
// ones); each client's Wait gets its own call's answer, and every plain
// call was answered in its request.
func TestAuthorize_ConcurrentApprovalsFindTheirAuthorizations(t *testing.T) {
	e := sharedEnv(t)
	c, ctx := e.client, context.Background()
	const clients = 16
	type held struct {
		command string
		res     api.AuthorizeResult
		task    api.TaskInfo
	}
	helds := make(chan held, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task, err := c.OpenTask(ctx, api.OpenTaskRequest{})
			if err != nil {
				errs <- err
				return
			}
			command := fmt.Sprintf("make target-%d", i)
			res, err := c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": command})}})
			if err != nil {
				errs <- err
				return
			}
			if res.Decision != api.DecisionPending {
				errs <- &unexpected{res}
				return
			}
			for n := range 3 {
				plain, err := c.Authorize(ctx, task.TaskID, readerCall(n))
				if err != nil {
					errs <- err
					return
				}
				if plain.Decision != api.DecisionAllow {
					errs <- &unexpected{plain}
					return
				}
				if err := c.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: plain.Permit.PermitID}); err != nil {
					errs <- err
					return
				}
			}
			helds <- held{command: command, res: res, task: task}
		}()
	}
	wg.Wait()
	close(errs)
	close(helds)
	for err := range errs {
		require.NoError(t, err)
	}
	byApproval := map[string]held{}
	for h := range helds {
		byApproval[h.res.ApprovalID] = h
	}
	require.Len(t, byApproval, clients, "every held call has its own approval")
	pending, err := c.Approvals(ctx)
	require.NoError(t, err)
	resolved := make(chan error, len(pending))
	for _, p := range pending {
		h, ok := byApproval[p.ApprovalID]
		if !ok {
			continue
		}
		require.JSONEq(t, `{"command":"`+h.command+`"}`, string(p.Arguments), "the approval shows its own call")
		var n int
		_, err := fmt.Sscanf(h.command, "make target-%d", &n)
		require.NoError(t, err)
		decision := map[bool]string{true: "allow", false: "deny"}[n%2 == 0]
		wg.Add(1)
		go func() {
			defer wg.Done()
			resolved <- c.ResolveApproval(ctx, p.ApprovalID, api.ResolveApprovalRequest{Decision: decision})
		}()
	}
	wg.Wait()
	close(resolved)
	for err := range resolved {
		require.NoError(t, err)
	}
	for _, h := range byApproval {
		res, err := c.Wait(ctx, h.res.AuthorizationID, 10*time.Second)
		require.NoError(t, err)
		var n int
		_, err = fmt.Sscanf(h.command, "make target-%d", &n)
		require.NoError(t, err)
		if n%2 == 0 {
			require.Equal(t, api.DecisionAllow, res.Decision, h.command)
			require.JSONEq(t, `{"command":"`+h.command+`"}`, string(res.Permit.Arguments), "the permit is for its own call")
			require.Equal(t, h.task.TaskID, res.Permit.TaskID)
			require.NoError(t, c.Complete(ctx, h.task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}))
		} else {
			require.Equal(t, api.DecisionDeny, res.Decision, h.command)
			require.Equal(t, "approval.required", res.Denial.ReasonCode)
		}
		closed, err := c.CloseTask(ctx, h.task.TaskID)
		require.NoError(t, err)
		require.Empty(t, closed.UnfinishedOperations)
	}
}
