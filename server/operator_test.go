package server_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/service"
)

func TestAPI_PolicyList(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	all, err := e.client.Policies(ctx)
	require.NoError(t, err)
	var found bool
	for _, p := range all {
		found = found || (p.PolicyID == service.DefaultPolicyID && p.Version == testPolicyVersion && p.ReleaseState == "active")
	}
	require.True(t, found, "the policy the server runs under is listed: %v", all)
	versions, err := e.client.PolicyVersions(ctx, service.DefaultPolicyID)
	require.NoError(t, err)
	require.NotEmpty(t, versions)
	for _, p := range versions {
		require.Equal(t, service.DefaultPolicyID, p.PolicyID)
	}
	_, err = e.client.PolicyVersions(ctx, uuid.New())
	requireCode(t, err, http.StatusNotFound, "policy_not_found")
}

// closedTask runs one allowed call in a fresh task and closes it.
func closedTask(t *testing.T, e *env) api.ClosedTask {
	t.Helper()
	ctx := context.Background()
	task, err := e.client.OpenTask(ctx, api.OpenTaskRequest{Actor: &governance.ActorRef{Kind: "agent", ID: "coder"}})
	require.NoError(t, err)
	res, err := e.client.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Arguments: args(map[string]any{"path": "README.md"})}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, res.Decision)
	require.NoError(t, e.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}))
	closed, err := e.client.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
	return closed
}

func TestAPI_TaskBundle(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	closed := closedTask(t, e)

	b, err := e.client.Bundle(ctx, closed.TaskID, true)
	require.NoError(t, err)
	require.Equal(t, closed.Head, b.Certificate.EvidenceChainHead)
	require.Equal(t, closed.TaskID, b.Certificate.TaskBoundaryID)
	require.Equal(t, closed.Head, b.Chain[len(b.Chain)-1].ChainHash)
	require.NotNil(t, b.Policy)
	require.Equal(t, closed.PolicyDigest, b.Policy.Digest())
	require.Contains(t, b.Checkpoint, closed.ChainID.String(), "a checkpoint of this chain")
	plain, err := e.client.Bundle(ctx, closed.TaskID, false)
	require.NoError(t, err)
	require.Empty(t, plain.Checkpoint)

	var archive bytes.Buffer
	require.NoError(t, e.client.BundleTar(ctx, closed.TaskID, true, &archive))
	tr := tar.NewReader(&archive)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		files[h.Name], err = io.ReadAll(tr)
		require.NoError(t, err)
	}
	require.ElementsMatch(t, []string{"certificate.json", "chain.jsonl", "policy.json", "checkpoint"}, keys(files))
	require.Equal(t, len(b.Chain), bytes.Count(files["chain.jsonl"], []byte("\n")))

	// Refusals: a task that is unknown (or still open), bad parameters.
	open, err := e.client.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	_, err = e.client.Bundle(ctx, open.TaskID, false)
	requireCode(t, err, http.StatusNotFound, "task_not_found")
	_, err = e.client.CloseTask(ctx, open.TaskID)
	require.NoError(t, err)
	_, err = e.client.Bundle(ctx, uuid.New(), false)
	requireCode(t, err, http.StatusNotFound, "task_not_found")
	for _, q := range []string{"?format=zip", "?checkpoint=yes"} {
		resp := rawGet(t, e, "/v1/tasks/"+closed.TaskID.String()+"/bundle"+q, testToken)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func rawGet(t *testing.T, e *env, path, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", e.http.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestAPI_CheckpointNeedsTheOperatorToken(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	closed := closedTask(t, e)
	_, err := e.agent.SignCheckpoint(ctx, closed.ChainID)
	requireCode(t, err, http.StatusForbidden, "forbidden")
	cp, err := e.operator.SignCheckpoint(ctx, closed.ChainID)
	require.NoError(t, err)
	require.Equal(t, closed.ChainID.String(), cp.ChainID)
	require.Contains(t, cp.Note, closed.ChainID.String())
	_, err = e.operator.SignCheckpoint(ctx, uuid.New())
	requireCode(t, err, http.StatusNotFound, "chain_not_found")
	_, err = e.operator.SignCheckpoint(ctx, uuid.Nil)
	requireCode(t, err, http.StatusBadRequest, "invalid_request")
	// The operator token works on agent routes too.
	_, err = e.operator.Tasks(ctx)
	require.NoError(t, err)
}

// TestAPI_BreakGlassExcusesAHardDeny: the grant is recorded with who
// issued it, excuses the next hard deny of its gate once, and the
// certificate says DEGRADED.
func TestAPI_BreakGlassExcusesAHardDeny(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	task, err := e.client.OpenTask(ctx, api.OpenTaskRequest{Actor: &governance.ActorRef{Kind: "agent", ID: "coder"}})
	require.NoError(t, err)
	sudo := api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "sudo ls"})}}
	res, err := e.client.Authorize(ctx, task.TaskID, sudo)
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, res.Decision)
	gate := res.Denial.GateID

	req := api.ExceptionRequest{GateID: gate, ToolID: "bash", ReasonCode: "incident.42", ExpiresAt: time.Now().Add(time.Hour)}
	_, err = e.agent.BreakGlass(ctx, task.TaskID, req)
	requireCode(t, err, http.StatusForbidden, "forbidden")
	_, err = e.operator.BreakGlass(ctx, task.TaskID, api.ExceptionRequest{GateID: gate, ToolID: "bash", ReasonCode: "incident.42"})
	requireCode(t, err, http.StatusBadRequest, "invalid_request")
	_, err = e.operator.BreakGlass(ctx, uuid.New(), req)
	requireCode(t, err, http.StatusNotFound, "task_not_found")

	g, err := e.operator.BreakGlass(ctx, task.TaskID, req)
	require.NoError(t, err)
	require.True(t, g.BreakGlass)
	require.Equal(t, governance.ActorRef{Kind: "agent", ID: "coder"}, g.Actor, "the task's actor by default")
	require.Equal(t, &governance.ActorRef{Kind: "operator", ID: "operator"}, g.IssuedBy)

	res, err = e.client.Authorize(ctx, task.TaskID, sudo)
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, res.Decision, "%+v", res.Denial)
	require.NoError(t, e.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}))
	res, err = e.client.Authorize(ctx, task.TaskID, sudo)
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, res.Decision, "a grant is used once")

	closed, err := e.client.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
	var chain bytes.Buffer
	require.NoError(t, e.client.ExportChain(ctx, closed.ChainID, &chain))
	require.Contains(t, chain.String(), `issued_by_kind\":\"operator\"`, "the issuer is recorded")
	cert, err := e.client.Mint(ctx, closed.ChainID, closed.Head)
	require.NoError(t, err)
	text, _ := json.Marshal(cert.Certificate)
	require.Contains(t, string(text), `"DEGRADED"`)
}

func TestAPI_ExceptionIsRecordedWithItsIssuer(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	task, err := e.client.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	req := api.ExceptionRequest{GateID: "permission", ToolID: "bash", ReasonCode: "r", ExpiresAt: time.Now().Add(time.Minute), Issuer: "alice"}
	_, err = e.operator.GrantException(ctx, task.TaskID, req)
	requireCode(t, err, http.StatusBadRequest, "invalid_request") // a task without an actor: name one
	req.Actor = &governance.ActorRef{Kind: "agent", ID: "x"}
	g, err := e.operator.GrantException(ctx, task.TaskID, req)
	require.NoError(t, err)
	require.False(t, g.BreakGlass)
	require.Equal(t, &governance.ActorRef{Kind: "operator", ID: "alice"}, g.IssuedBy)
	_, err = e.client.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
}
