package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/console"
)

// serve --notify posts a held call to the webhook with signed links; the
// approve link's confirmation page answers it once, and the agent's call
// proceeds. --approval-timeout denies the next one as system/timeout.
func TestServe_NotifyLinksAndApprovalTimeout(t *testing.T) {
	notes := make(chan console.Notification, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n console.Notification
		if err := json.NewDecoder(r.Body).Decode(&n); err == nil {
			notes <- n
		}
	}))
	defer hook.Close()
	s := startServe(t, t.TempDir(), "--notify", hook.URL, "--approval-timeout", "20s")
	ctx := context.Background()
	task, err := s.client.OpenTask(ctx, api.OpenTaskRequest{Workspace: t.TempDir()})
	require.NoError(t, err)
	hold := func() api.AuthorizeResult {
		res, err := s.client.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{
			Tool: "bash", Arguments: json.RawMessage(`{"command":"make release"}`), AgentName: "coder"}})
		require.NoError(t, err)
		require.Equal(t, api.DecisionPending, res.Decision)
		return res
	}
	first := hold()
	var n console.Notification
	select {
	case n = <-notes:
	case <-time.After(time.Minute):
		t.Fatal("no notification")
	}
	require.Equal(t, first.ApprovalID, n.ApprovalID)
	require.True(t, strings.HasPrefix(n.ApproveURL, s.url+"/ui/link?"), n.ApproveURL)

	resp, err := http.Get(n.ApproveURL)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(page), "make release")
	link, _ := url.Parse(n.ApproveURL)
	confirm := func() int {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/ui/link", strings.NewReader(link.Query().Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", s.url)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, confirm())
	require.Equal(t, http.StatusConflict, confirm(), "a link works once")
	res, err := s.client.Wait(ctx, first.AuthorizationID, time.Minute)
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, res.Decision)
	require.NoError(t, s.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}))

	// Nobody answers the next one: denied by system/timeout after 20 s.
	second := hold()
	for res.Decision = api.DecisionPending; res.Decision == api.DecisionPending; {
		res, err = s.client.Wait(ctx, second.AuthorizationID, time.Minute)
		require.NoError(t, err)
	}
	require.Equal(t, api.DecisionDeny, res.Decision)
	require.Contains(t, res.Denial.Message, "nobody answered within 20s")
	var chain strings.Builder
	require.NoError(t, s.client.ExportChain(ctx, task.ChainID, &chain))
	require.Contains(t, chain.String(), `\"approver_id\":\"`+first.ApprovalID+`\",\"approver_kind\":\"link\"`)
	require.Contains(t, chain.String(), `\"approver_id\":\"timeout\",\"approver_kind\":\"system\"`)
}
