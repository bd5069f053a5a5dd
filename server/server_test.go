package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/server"
	"github.com/govhost/govhost/server/client"
	"github.com/govhost/govhost/service"
)

func TestOpenAPI_MatchesRoutes(t *testing.T) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(server.OpenAPI)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(loader.Context))
	require.True(t, doc.IsOpenAPI31OrLater())
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	served := append(server.Routes(), "GET /metrics")
	sort.Strings(documented)
	sort.Strings(served)
	require.Equal(t, served, documented, "every route documented, every documented route served")
}

func args(v map[string]any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// TestAPI_GovernedSessionEndToEnd drives every route through the Go client
// with each exchange checked against openapi.yaml.
func TestAPI_GovernedSessionEndToEnd(t *testing.T) {
	e := sharedEnv(t)
	c, ctx := e.client, context.Background()
	require.NoError(t, c.Ready(ctx))
	task, err := c.OpenTask(ctx, api.OpenTaskRequest{Actor: &governance.ActorRef{Kind: "agent", ID: "coder"}, Workspace: t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, service.DefaultPolicyID, task.PolicyID)
	tasks, err := c.Tasks(ctx)
	require.NoError(t, err)
	require.Contains(t, tasks, task)

	// allow → permit → complete
	res, err := c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Arguments: args(map[string]any{"path": "README.md", "secret": "hunter2"})}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, res.Decision)
	require.JSONEq(t, `{"path":"README.md","secret":"hunter2"}`, string(res.Permit.Arguments))
	require.NoError(t, c.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID, ResultDigest: governance.SHA256Hex([]byte("# readme")), DurationUS: 120}))

	// deny
	res, err = c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "rm -rf /"})}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, res.Decision)
	require.Equal(t, "destructive.rm_recursive_force", res.Denial.ReasonCode)

	// require_approval → pending → resolve → the waiting authorization gets its permit
	res, err = c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "go test ./..."})}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionPending, res.Decision)
	require.NotEmpty(t, res.ApprovalID)
	pending, err := c.Approvals(ctx)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, res.ApprovalID, pending[0].ApprovalID)
	require.Equal(t, "permission.escalate", pending[0].ReasonCode)
	require.JSONEq(t, `{"command":"go test ./..."}`, string(pending[0].Arguments), "the approver sees the arguments")
	again, err := c.Wait(ctx, res.AuthorizationID, 10*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, api.DecisionPending, again.Decision, "a wait that runs out answers pending again")
	require.NoError(t, c.ResolveApproval(ctx, res.ApprovalID, api.ResolveApprovalRequest{Decision: "allow", Approver: &governance.ActorRef{Kind: "user", ID: "reviewer"}}))
	done, err := c.Wait(ctx, res.AuthorizationID, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, done.Decision)
	require.NoError(t, c.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: done.Permit.PermitID, Failed: true, ErrorClass: "exit_status"}))
	_, err = c.Wait(ctx, res.AuthorizationID, 0)
	requireCode(t, err, http.StatusNotFound, "authorization_not_found")

	// a rejected approval is a recorded deny (with a wait long enough in the request itself)
	go func() {
		for {
			p, _ := c.Approvals(ctx)
			if len(p) > 0 {
				_ = c.ResolveApproval(ctx, p[0].ApprovalID, api.ResolveApprovalRequest{Decision: "deny"})
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err = c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "make deploy"})}, WaitMS: 20000})
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, res.Decision)
	require.Equal(t, "approval.required", res.Denial.ReasonCode)

	ev, err := c.Evaluate(ctx, api.EvaluateRequest{Call: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "sudo reboot"})}})
	require.NoError(t, err)
	require.Equal(t, "deny", ev.Decision)

	closed, err := c.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
	require.Empty(t, closed.UnfinishedOperations)
	cert, err := c.Mint(ctx, closed.ChainID, closed.Head)
	require.NoError(t, err)
	require.Equal(t, closed.Head, cert.Certificate.EvidenceChainHead)
	require.Equal(t, governance.GradeFull, cert.Certificate.ProcessGrade)
	got, err := c.Certificate(ctx, cert.Certificate.CertificateID)
	require.NoError(t, err)
	require.Equal(t, cert.Certificate.CertificateID, got.Certificate.CertificateID)

	var chain bytes.Buffer
	require.NoError(t, c.ExportChain(ctx, closed.ChainID, &chain))
	require.NotContains(t, chain.String(), "hunter2", "argument values never reach evidence")
	vr, err := evidence.VerifyJSONL(bytes.NewReader(chain.Bytes()), cert.Certificate.EvidenceChainHead)
	require.NoError(t, err)
	require.True(t, vr.Valid)
	head, err := c.ChainHead(ctx, closed.ChainID)
	require.NoError(t, err)
	require.Equal(t, closed.Head, head.Hash)
	vr, err = c.VerifyChain(ctx, closed.ChainID, closed.Head)
	require.NoError(t, err)
	require.True(t, vr.Valid)
	vr, err = c.VerifyChain(ctx, closed.ChainID, strings.Repeat("0", 64))
	require.NoError(t, err)
	require.False(t, vr.Valid)

	// policies
	pol, err := c.ResolvePolicy(ctx, "", "")
	require.NoError(t, err)
	require.Equal(t, testPolicyVersion, pol.Version)
	pid := uuid.New()
	file := json.RawMessage(`{"policy_id":"` + pid.String() + `","version":"1","gates":[{"gate_id":"destructive","module":"destructive","level":"hard","order":1,"tool_ids":["bash"]}]}`)
	put, err := c.PutPolicy(ctx, file)
	require.NoError(t, err)
	require.Equal(t, "staged", put.ReleaseState)
	_, err = c.ActivatePolicy(ctx, pid, "1", &governance.ActorRef{Kind: "user", ID: "ops"})
	require.NoError(t, err)
	_, err = c.BindPolicy(ctx, pid, "1", api.BindRequest{Scope: "role", Selector: "ci"})
	require.NoError(t, err)
	pol, err = c.ResolvePolicy(ctx, "ci", "")
	require.NoError(t, err)
	require.Equal(t, pid, pol.PolicyID)
	ciTask, err := c.OpenTask(ctx, api.OpenTaskRequest{Role: "ci"})
	require.NoError(t, err)
	require.Equal(t, pid, ciTask.PolicyID)
	resp := e.get(t, "/v1/policies/"+pid.String()+"/versions/1", testToken)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	resp = e.get(t, "/metrics", testToken)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body := readAll(t, resp)
	require.Contains(t, body, `govhost_gate_verdicts_total{decision="deny",failed="false",gate="destructive",reason_code="destructive.rm_recursive_force"} `)
	require.Contains(t, body, `govhost_http_requests_total{method="POST",route="/v1/tasks/{task_id}/authorize",status="200"}`)
	require.Contains(t, body, "govhost_evidence_append_duration_seconds_bucket")
	require.Regexp(t, `govhost_open_tasks [1-9]`, body)
	require.Contains(t, body, "govhost_pending_approvals 0")
	require.Equal(t, http.StatusOK, e.get(t, "/v1/openapi.yaml", testToken).StatusCode)
	require.Equal(t, http.StatusOK, e.get(t, "/healthz", "").StatusCode)
}

func (e *env) get(t *testing.T, path, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", e.http.URL+path, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	var b bytes.Buffer
	_, err := b.ReadFrom(resp.Body)
	require.NoError(t, err)
	return b.String()
}

func requireCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, status, ce.Status, ce.Message)
	require.Equal(t, code, ce.Code, ce.Message)
}

func TestAPI_ApprovalEventStream(t *testing.T) {
	e := sharedEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/v1/approvals/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	task, err := e.client.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	res, err := e.client.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "make"})}})
	require.NoError(t, err)
	require.NoError(t, e.client.ResolveApproval(ctx, res.ApprovalID, api.ResolveApprovalRequest{Decision: "allow"}))
	buf := make([]byte, 0, 4096)
	chunk := make([]byte, 1024)
	for !strings.Contains(string(buf), "event: resolved") {
		n, err := resp.Body.Read(chunk)
		require.NoError(t, err)
		buf = append(buf, chunk[:n]...)
	}
	require.Contains(t, string(buf), "event: pending\ndata: {\"approval_id\":\""+res.ApprovalID)
}

// GET /v1/decisions/events streams verdicts (never argument values), and
// needs the operator token.
func TestAPI_DecisionEventStream(t *testing.T) {
	e := sharedEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, token := range []string{"", testAgentToken} {
		req, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/v1/decisions/events", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.NotEqual(t, http.StatusOK, resp.StatusCode, "an agent's token (or none) does not see every verdict")
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/v1/decisions/events", nil)
	req.Header.Set("Authorization", "Bearer "+testOperatorToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	task, err := e.client.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	res, err := e.client.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "rm -rf /srv/secret-place"}), AgentName: "coder"}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, res.Decision)
	// Other tests' calls on the shared server may finish meanwhile: find
	// this call's verdict by its operation.
	var ev api.DecisionEvent
	var data string
	sc := bufio.NewScanner(resp.Body)
	for ev.OperationID.String() != res.Denial.OperationID {
		require.True(t, sc.Scan(), "the stream ended: %v", sc.Err())
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		data = line
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
	}
	require.Equal(t, api.VerdictDeny, ev.Verdict)
	require.Equal(t, res.Denial.ReasonCode, ev.ReasonCode)
	require.Equal(t, task.TaskID, ev.TaskID)
	require.Equal(t, "coder", ev.AgentName)
	require.NotContains(t, data, "secret-place")
}

func TestAPI_CloseNamesEveryUnfinishedOperation(t *testing.T) {
	e := sharedEnv(t)
	c, ctx := e.client, context.Background()
	task, err := c.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	permitted, err := c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Arguments: args(map[string]any{"path": "x"})}})
	require.NoError(t, err)
	waiting, err := c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "make"})}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionPending, waiting.Decision)
	pending, err := c.Approvals(ctx)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	closed, err := c.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
	require.ElementsMatch(t, []uuid.UUID{permitted.Permit.OperationID, pending[0].OperationID}, closed.UnfinishedOperations)
	_, err = c.Mint(ctx, closed.ChainID, closed.Head)
	requireCode(t, err, http.StatusConflict, "not_mintable")
	require.Contains(t, err.Error(), permitted.Permit.OperationID.String())
	// The approval answered after the close appends nothing: the task is closed.
	require.NoError(t, c.ResolveApproval(ctx, pending[0].ApprovalID, api.ResolveApprovalRequest{Decision: "allow"}))
	_, err = c.Wait(ctx, waiting.AuthorizationID, 10*time.Second)
	requireCode(t, err, http.StatusConflict, "task_closed")
	head, err := c.ChainHead(ctx, closed.ChainID)
	require.NoError(t, err)
	require.Equal(t, closed.Head, head.Hash)
}
