package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
)

// send posts body to path with token ("" for none) and returns the status
// and the body.
func (e *env) send(t *testing.T, method, path, body, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.http.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var eb api.ErrorBody
	require.NoError(t, json.Unmarshal(body, &eb), string(body))
	return eb.Error.Code
}

// globalVersion is the policy id and version bound globally.
func (e *env) globalVersion(t *testing.T) (string, string) {
	t.Helper()
	bs, err := e.client.Bindings(context.Background(), "global", "")
	require.NoError(t, err)
	require.Len(t, bs, 1)
	return bs[0].PolicyID.String(), bs[0].PolicyVersion
}

// destructivePolicy is a valid policy file with a fresh id.
func destructivePolicy() (uuid.UUID, string) {
	id := uuid.New()
	return id, fmt.Sprintf(`{"policy_id":%q,"version":"1","gates":[{"gate_id":"destructive","module":"destructive","level":"hard","order":10,"tool_ids":["bash"]}]}`, id)
}

// TestRoles_TheAgentsTokenCannotChangeWhatGoverns: with the agents' token,
// creating, activating, binding and unbinding policies and uploading a
// module answer 403 forbidden and change nothing; the agents' routes
// (tasks, authorize, the bindings list) answer; the operator token works on
// both kinds.
func TestRoles_TheAgentsTokenCannotChangeWhatGoverns(t *testing.T) {
	e := sharedEnv(t)
	status, before := e.send(t, "GET", "/v1/bindings", "", testAgentToken)
	require.Equal(t, http.StatusOK, status)

	id, file := destructivePolicy()
	versions := fmt.Sprintf("/v1/policies/%s/versions/1", id)
	defaultID, defaultV := e.globalVersion(t)
	defaultVersion := fmt.Sprintf("/v1/policies/%s/versions/%s", defaultID, defaultV)
	for _, c := range []struct{ path, body string }{
		{"/v1/policies", file},
		{versions + "/activate", ""},
		{versions + "/bind", `{"scope":"global"}`},
		{defaultVersion + "/unbind", `{"scope":"global"}`},
	} {
		status, body := e.send(t, "POST", c.path, c.body, testAgentToken)
		require.Equal(t, http.StatusForbidden, status, "%s: %s", c.path, body)
		require.Equal(t, "forbidden", errorCode(t, body))
	}
	resp := e.upload(t, []byte("\x00asm\x01\x00\x00\x00"), "application/wasm", testAgentToken)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	status, _ = e.send(t, "GET", versions, "", testToken)
	require.Equal(t, http.StatusNotFound, status, "the refused put stored nothing")
	status, after := e.send(t, "GET", "/v1/bindings", "", testToken)
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, string(before), string(after), "the refused unbind changed nothing")

	status, body := e.send(t, "POST", "/v1/tasks", "{}", testAgentToken)
	require.Equal(t, http.StatusCreated, status, string(body))
	status, _ = e.send(t, "POST", "/v1/tasks", "{}", "not-a-token-at-all-but-long-enough-to-try")
	require.Equal(t, http.StatusUnauthorized, status)
}

// TestBind_ASecondVersionOnAScopeIsRefusedAndUnbindReplacesIt is the
// lockout of issue 28 through the API: put, activate and bind a second
// version globally — the bind is refused 409 bind_ambiguous naming both
// versions and tasks keep opening; unbinding the default and binding the
// new one replaces it explicitly; binding the default back restores it.
func TestBind_ASecondVersionOnAScopeIsRefusedAndUnbindReplacesIt(t *testing.T) {
	e := sharedEnv(t)
	id, file := destructivePolicy()
	versions := fmt.Sprintf("/v1/policies/%s/versions/1", id)
	defaultID, defaultV := e.globalVersion(t)
	defaultVersion := fmt.Sprintf("/v1/policies/%s/versions/%s", defaultID, defaultV)

	status, body := e.send(t, "POST", "/v1/policies", file, testToken)
	require.Equal(t, http.StatusCreated, status, string(body))
	status, body = e.send(t, "POST", versions+"/activate", "", testToken)
	require.Equal(t, http.StatusOK, status, string(body))
	status, body = e.send(t, "POST", versions+"/bind", `{"scope":"global"}`, testToken)
	require.Equal(t, http.StatusConflict, status, string(body))
	require.Equal(t, "bind_ambiguous", errorCode(t, body))
	require.Contains(t, string(body), defaultID+"@"+defaultV)
	require.Contains(t, string(body), id.String()+"@1")
	status, body = e.send(t, "POST", "/v1/tasks", "{}", testAgentToken)
	require.Equal(t, http.StatusCreated, status, "tasks still open: %s", body)

	status, body = e.send(t, "POST", defaultVersion+"/unbind", `{"scope":"global"}`, testToken)
	require.Equal(t, http.StatusOK, status, string(body))
	var unbound api.Unbound
	require.NoError(t, json.Unmarshal(body, &unbound))
	require.Equal(t, 1, unbound.Removed)
	t.Cleanup(func() { // the shared server's default policy governs again
		e.send(t, "POST", versions+"/unbind", `{"scope":"global"}`, testToken)
		status, body := e.send(t, "POST", defaultVersion+"/bind", `{"scope":"global"}`, testToken)
		require.Equal(t, http.StatusCreated, status, string(body))
	})
	status, body = e.send(t, "POST", versions+"/bind", `{"scope":"global"}`, testToken)
	require.Equal(t, http.StatusCreated, status, string(body))

	status, body = e.send(t, "GET", "/v1/bindings?scope=global", "", testAgentToken)
	require.Equal(t, http.StatusOK, status)
	var list struct {
		Bindings []struct {
			PolicyID      string `json:"policy_id"`
			PolicyVersion string `json:"policy_version"`
		} `json:"bindings"`
	}
	require.NoError(t, json.Unmarshal(body, &list), string(body))
	require.Len(t, list.Bindings, 1, string(body))
	require.Equal(t, id.String(), list.Bindings[0].PolicyID)
	status, body = e.send(t, "POST", "/v1/tasks", "{}", testAgentToken)
	require.Equal(t, http.StatusCreated, status, string(body))
	require.Contains(t, string(body), id.String())
}

// TestPaths_NonCanonicalAreAJSON404BeforeAuth: paths http.ServeMux would
// redirect (with an HTML body) to their cleaned form are refused as they
// are, 404 not_found in the JSON error body, with or without a token.
func TestPaths_NonCanonicalAreAJSON404BeforeAuth(t *testing.T) {
	e := sharedEnv(t)
	for _, p := range []string{"//v1/tasks", "/v1/modules/../token", "/v1/./tasks", "/v1//approvals"} {
		for _, token := range []string{"", testToken} {
			req, err := http.NewRequest("GET", e.http.URL+p, nil)
			require.NoError(t, err)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := client.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s: %s", p, body)
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"), p)
			require.Equal(t, "not_found", errorCode(t, body), p)
		}
	}
}
