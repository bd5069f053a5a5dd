package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
)

// TestAPI_BadRequests sends each kind of bad request and checks its stable
// status and code, the error body's shape, and that nothing was appended.
func TestAPI_BadRequests(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	c := e.client
	task, err := c.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	other, err := c.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	allow := api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Arguments: args(map[string]any{"path": "a"})}}
	used, err := c.Authorize(ctx, task.TaskID, allow)
	require.NoError(t, err)
	require.NoError(t, c.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: used.Permit.PermitID}))
	live, err := c.Authorize(ctx, task.TaskID, allow)
	require.NoError(t, err)
	closing, err := c.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	orphan, err := c.Authorize(ctx, closing.TaskID, allow)
	require.NoError(t, err)
	_, err = c.CloseTask(ctx, closing.TaskID)
	require.NoError(t, err)

	authz := "/v1/tasks/" + task.TaskID.String() + "/authorize"
	complete := "/v1/tasks/" + task.TaskID.String() + "/complete"
	big := `{"tool":"reader","arguments":{"x":"` + strings.Repeat("a", 70<<10) + `"}}`
	cases := []struct {
		name, method, path, body, token, contentType string
		status                                       int
		code                                         string
	}{
		{"malformed JSON", "POST", authz, `{"tool":"reader",`, testToken, "", 400, "malformed_json"},
		{"not JSON at all", "POST", authz, `tool=reader`, testToken, "", 400, "malformed_json"},
		{"a trailing second document", "POST", authz, `{"tool":"reader"} {"tool":"bash"}`, testToken, "", 400, "trailing_data"},
		{"an unknown field", "POST", authz, `{"tool":"reader","argumentz":{}}`, testToken, "", 400, "unknown_field"},
		// Issue 28: read as every reader reads it, or refused.
		{"a case variant beside the key", "POST", authz, `{"tool":"reader","arguments":{},"Tool":"bash"}`, testToken, "", 400, "unknown_field"},
		{"a key in another case", "POST", authz, `{"TOOL":"reader"}`, testToken, "", 400, "unknown_field"},
		{"a nested key in another case", "POST", "/v1/policies/" + uuid.NewString() + "/versions/1/activate", `{"actor":{"Kind":"user","id":"x"}}`, testToken, "", 400, "unknown_field"},
		{"a key twice", "POST", authz, `{"tool":"bash","tool":"reader"}`, testToken, "", 400, "ambiguous_json"},
		{"an argument twice", "POST", authz, `{"tool":"reader","arguments":{"path":"a","path":"b"}}`, testToken, "", 400, "ambiguous_json"},
		{"invalid UTF-8", "POST", authz, "{\"tool\":\"reader\",\"arguments\":{\"path\":\"\xff\"}}", testToken, "", 400, "ambiguous_json"},
		{"an unpaired surrogate", "POST", authz, `{"tool":"reader","arguments":{"path":"\ud800"}}`, testToken, "", 400, "ambiguous_json"},
		{"a body over the limit", "POST", authz, big, testToken, "", 413, "body_too_large"},
		{"a form, not JSON", "POST", authz, `{"tool":"reader"}`, testToken, "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
		{"a missing token", "POST", authz, `{"tool":"reader"}`, "", "", 401, "unauthorized"},
		{"a wrong token", "POST", authz, `{"tool":"reader"}`, strings.Repeat("x", 40), "", 401, "unauthorized"},
		{"a token one byte short", "POST", authz, `{"tool":"reader"}`, testToken[:len(testToken)-1], "", 401, "unauthorized"},
		{"no tool", "POST", authz, `{"arguments":{}}`, testToken, "", 400, "invalid_request"},
		{"arguments not an object", "POST", authz, `{"tool":"reader","arguments":[1,2]}`, testToken, "", 400, "invalid_request"},
		{"a float where an integer belongs", "POST", complete, `{"permit_id":"` + live.Permit.PermitID + `","duration_us":1.5}`, testToken, "", 400, "invalid_request"},
		{"a wait over the bound", "POST", authz, `{"tool":"reader","wait_ms":600000}`, testToken, "", 400, "invalid_request"},
		{"a task id that is not a UUID", "POST", "/v1/tasks/nope/authorize", `{"tool":"reader"}`, testToken, "", 400, "invalid_request"},
		{"an unknown task", "POST", "/v1/tasks/" + uuid.NewString() + "/authorize", `{"tool":"reader"}`, testToken, "", 404, "task_not_found"},
		{"a reused permit", "POST", complete, `{"permit_id":"` + used.Permit.PermitID + `"}`, testToken, "", 409, "permit_used"},
		{"a permit of another task", "POST", "/v1/tasks/" + other.TaskID.String() + "/complete", `{"permit_id":"` + live.Permit.PermitID + `"}`, testToken, "", 403, "permit_wrong_task"},
		{"an unknown permit", "POST", complete, `{"permit_id":"` + uuid.NewString() + `"}`, testToken, "", 404, "permit_unknown"},
		{"completing after close", "POST", "/v1/tasks/" + closing.TaskID.String() + "/complete", `{"permit_id":"` + orphan.Permit.PermitID + `"}`, testToken, "", 409, "task_closed"},
		{"a result digest that is not one", "POST", complete, `{"permit_id":"` + live.Permit.PermitID + `","result_digest":"abc"}`, testToken, "", 400, "invalid_request"},
		{"free text as an error class", "POST", complete, `{"permit_id":"` + live.Permit.PermitID + `","failed":true,"error_class":"Traceback: password=x"}`, testToken, "", 400, "invalid_request"},
		{"closing a closed task", "POST", "/v1/tasks/" + closing.TaskID.String() + "/close", ``, testToken, "", 404, "task_not_found"},
		{"an unknown policy pin", "POST", "/v1/tasks", `{"policy_id":"` + uuid.NewString() + `","version":"1"}`, testToken, "", 404, "policy_not_found"},
		{"half a policy pin", "POST", "/v1/tasks", `{"version":"1"}`, testToken, "", 400, "invalid_request"},
		{"a relative workspace", "POST", "/v1/tasks", `{"workspace":"relative/dir"}`, testToken, "", 400, "invalid_request"},
		{"an unknown gate digest", "POST", "/v1/policies", `{"policy_id":"` + uuid.NewString() + `","version":"1","gates":[{"gate_id":"g","module":"` + strings.Repeat("ab", 32) + `","level":"hard","order":1,"tool_ids":["bash"]}]}`, testToken, "", 422, "module_not_found"},
		{"a module path over the API", "POST", "/v1/policies", `{"policy_id":"` + uuid.NewString() + `","version":"1","gates":[{"gate_id":"g","module":"/etc/passwd.wasm","level":"hard","order":1,"tool_ids":["bash"]}]}`, testToken, "", 422, "module_not_found"},
		{"an invalid policy file", "POST", "/v1/policies", `{"policy_id":"x"}`, testToken, "", 422, "policy_invalid"},
		{"activating an unknown version", "POST", "/v1/policies/" + uuid.NewString() + "/versions/9/activate", ``, testToken, "", 404, "policy_not_found"},
		{"binding with a bad scope", "POST", "/v1/policies/" + task.PolicyID.String() + "/versions/" + task.PolicyVersion + "/bind", `{"scope":"planet"}`, testToken, "", 400, "invalid_request"},
		{"minting an open task's chain", "POST", "/v1/chains/" + task.ChainID.String() + "/certificate", ``, testToken, "", 409, "not_mintable"},
		{"minting an unknown chain", "POST", "/v1/chains/" + uuid.NewString() + "/certificate", ``, testToken, "", 404, "chain_not_found"},
		{"minting against a malformed head", "POST", "/v1/chains/" + task.ChainID.String() + "/certificate", `{"expected_head":"zz"}`, testToken, "", 400, "invalid_request"},
		{"verifying without a head", "POST", "/v1/chains/" + task.ChainID.String() + "/verify", `{}`, testToken, "", 400, "invalid_request"},
		{"exporting an unknown chain", "GET", "/v1/chains/" + uuid.NewString(), ``, testToken, "", 404, "chain_not_found"},
		{"an unknown certificate", "GET", "/v1/certificates/" + uuid.NewString(), ``, testToken, "", 404, "certificate_not_found"},
		{"resolving an approval that is not pending", "POST", "/v1/approvals/tool-approval-999", `{"decision":"allow"}`, testToken, "", 404, "approval_not_found"},
		{"an approval decision that is neither", "POST", "/v1/approvals/tool-approval-1", `{"decision":"maybe"}`, testToken, "", 400, "invalid_request"},
		{"an unknown authorization", "GET", "/v1/authorizations/nope", ``, testToken, "", 404, "authorization_not_found"},
		{"a wait that is not a number", "GET", "/v1/authorizations/nope?wait_ms=soon", ``, testToken, "", 400, "invalid_request"},
		{"an unknown route", "GET", "/v1/nothing", ``, testToken, "", 404, "not_found"},
		{"an unknown route without a token", "GET", "/v1/nothing", ``, "", "", 401, "unauthorized"},
	}
	before := e.records()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, e.http.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			} else if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			require.Equal(t, tc.status, resp.StatusCode, string(raw))
			var eb api.ErrorBody
			dec := json.NewDecoder(strings.NewReader(string(raw)))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&eb), string(raw))
			require.Equal(t, tc.code, eb.Error.Code, eb.Error.Message)
			require.NotEmpty(t, eb.Error.Message)
			if tc.status == 401 {
				require.Equal(t, `Bearer realm="govhost"`, resp.Header.Get("WWW-Authenticate"))
			}
			require.Equal(t, before, e.records(), "a refused request appends nothing")
		})
	}
	// The live permit still completes after all of that.
	require.NoError(t, c.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: live.Permit.PermitID}))
}
