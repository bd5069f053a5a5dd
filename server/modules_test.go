package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// TestAPI_ModuleUploadBindAuthorize uploads a C-built user gate, binds it
// by digest in a policy put over the API, and sees that gate's verdicts on
// authorized calls; uploading the same bytes again is a 200, and the
// module is listed and stored content-addressed.
func TestAPI_ModuleUploadBindAuthorize(t *testing.T) {
	e := sharedEnv(t)
	c, ctx := e.client, context.Background()
	wasm := wasmfixtures.Bytes("c_gate.wasm")
	digest := governance.SHA256Hex(wasm)

	up, err := c.UploadModule(ctx, wasm)
	require.NoError(t, err)
	require.True(t, up.Created)
	require.Equal(t, digest, up.SHA256)
	require.Equal(t, "native", up.ABIKind)
	require.Equal(t, len(wasm), up.Size)
	require.Subset(t, up.Exports, []string{"gate_abi_version", "gate_alloc", "gate_evaluate", "memory"})
	stored, err := os.ReadFile(filepath.Join(e.modules, digest+".wasm"))
	require.NoError(t, err)
	require.Equal(t, wasm, stored, "stored under its sha256, byte for byte")

	again, err := c.UploadModule(ctx, wasm)
	require.NoError(t, err)
	require.False(t, again.Created, "the same bytes twice: already stored")
	require.Equal(t, up.Module, again.Module)
	resp := e.upload(t, wasm, "application/wasm", testToken)
	require.Equal(t, http.StatusOK, resp.StatusCode, "application/wasm is accepted too; 200: not created")
	require.Equal(t, "/v1/modules/"+digest, resp.Header.Get("Location"))

	// An Extism-ABI module is detected as one.
	ext, err := c.UploadModule(ctx, wasmfixtures.Bytes("extism_spy.wasm"))
	require.NoError(t, err)
	require.Equal(t, "extism", ext.ABIKind)

	list, err := c.Modules(ctx)
	require.NoError(t, err)
	require.Contains(t, list, api.StoredModule{Module: up.Module})
	require.Contains(t, list, api.StoredModule{Module: ext.Module})
	one, err := c.Module(ctx, digest)
	require.NoError(t, err)
	require.Equal(t, up.Module, one)

	// Bind it by digest, next to nothing else, and authorize through it.
	pid := uuid.New()
	file, _ := json.Marshal(map[string]any{
		"policy_id": pid, "version": "1",
		"gates": []map[string]any{{
			"gate_id": "cgate", "module": digest, "level": "hard", "order": 1,
			"tool_ids": []string{"web_fetch", "reader"}, "config": map[string]any{"deny_tool": "web_fetch"},
		}},
	})
	_, err = c.PutPolicy(ctx, file)
	require.NoError(t, err)
	_, err = c.ActivatePolicy(ctx, pid, "1", nil)
	require.NoError(t, err)
	task, err := c.OpenTask(ctx, api.OpenTaskRequest{PolicyID: pid.String(), Version: "1"})
	require.NoError(t, err)
	res, err := c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "web_fetch", Arguments: args(map[string]any{"url": "https://example.com"})}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, res.Decision)
	require.Equal(t, "cgate.tool_denied", res.Denial.ReasonCode)
	require.Equal(t, "cgate", res.Denial.GateID)
	res, err = c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader", Arguments: args(map[string]any{"path": "a"})}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionAllow, res.Decision)
	require.NoError(t, c.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}))
	closed, err := c.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)
	_, err = c.Mint(ctx, closed.ChainID, closed.Head)
	require.NoError(t, err)
}

// TestAPI_ModuleUploadRefusals sends each kind of bad upload and checks
// its stable status and code, and that nothing was stored (the module
// folder and the listing are unchanged) and nothing appended.
func TestAPI_ModuleUploadRefusals(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	// Something is stored already, so "unchanged" is not "empty".
	_, err := e.client.UploadModule(ctx, wasmfixtures.Bytes("allow.wasm"))
	require.NoError(t, err)
	folder := func() []string {
		entries, err := os.ReadDir(e.modules)
		require.NoError(t, err)
		var names []string
		for _, en := range entries {
			names = append(names, en.Name())
		}
		return names
	}
	beforeFolder, beforeRecords := folder(), e.records()
	beforeList, err := e.client.Modules(ctx)
	require.NoError(t, err)

	valid := wasmfixtures.Bytes("allow.wasm")
	cases := []struct {
		name        string
		body        []byte
		contentType string
		token       string
		status      int
		code        string
	}{
		{"an empty body", nil, "application/octet-stream", testToken, 400, "module_empty"},
		{"bytes that are not wasm", []byte("#!/bin/sh\nrm -rf /\n"), "application/octet-stream", testToken, 422, "gate.invalid_module"},
		{"a wasm header and garbage", append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte{0xff}, 64)...), "application/octet-stream", testToken, 422, "gate.invalid_module"},
		{"a valid wasm that is not a gate", wasmfixtures.Bytes("missing_export.wasm"), "application/octet-stream", testToken, 422, "gate.missing_export"},
		{"a gate export with the wrong signature", wasmfixtures.Bytes("wrong_signature.wasm"), "application/octet-stream", testToken, 422, "gate.missing_export"},
		{"a reserved __govhost_ export", wasmfixtures.Bytes("reserved_name.wasm"), "application/octet-stream", testToken, 422, "gate.reserved_name"},
		{"an import the host does not provide", wasmfixtures.Bytes("bad_import.wasm"), "application/octet-stream", testToken, 422, "gate.bad_import"},
		{"an imported global", wasmfixtures.Bytes("bad_import_global.wasm"), "application/octet-stream", testToken, 422, "gate.bad_import"},
		{"a memory past the cap", wasmfixtures.Bytes("big_memory.wasm"), "application/octet-stream", testToken, 422, "gate.memory_limit"},
		{"too many functions", manyFunctions(100_001), "application/octet-stream", testToken, 422, "gate.too_many_functions"},
		{"a body over the module limit", bytes.Repeat([]byte{0}, testMaxModule+1), "application/octet-stream", testToken, 413, "body_too_large"},
		{"a valid gate sent as JSON", valid, "application/json", testToken, 415, "unsupported_media_type"},
		{"a valid gate sent as a form (curl -d)", valid, "application/x-www-form-urlencoded", testToken, 415, "unsupported_media_type"},
		{"a valid gate without a token", valid, "application/octet-stream", "", 401, "unauthorized"},
		{"a valid gate with a wrong token", valid, "application/octet-stream", strings.Repeat("y", 40), 401, "unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.upload(t, tc.body, tc.contentType, tc.token)
			raw, _ := io.ReadAll(resp.Body)
			require.Equal(t, tc.status, resp.StatusCode, string(raw))
			var eb api.ErrorBody
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&eb), string(raw))
			require.Equal(t, tc.code, eb.Error.Code, eb.Error.Message)
			require.NotEmpty(t, eb.Error.Message)
			require.Equal(t, beforeFolder, folder(), "nothing stored, no temporary file left")
			list, err := e.client.Modules(ctx)
			require.NoError(t, err)
			require.Equal(t, beforeList, list)
			require.Equal(t, beforeRecords, e.records(), "nothing appended")
		})
	}
	// Looking one up: a digest that is not one, and one that is not here.
	resp := e.get(t, "/v1/modules/not-a-digest", testToken)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	_, err = e.client.Module(ctx, strings.Repeat("ab", 32))
	requireCode(t, err, http.StatusNotFound, "module_unknown")
	// A refused module cannot be bound: its digest is not a stored module.
	file := `{"policy_id":"` + uuid.NewString() + `","version":"1","gates":[{"gate_id":"g","module":"` +
		governance.SHA256Hex(wasmfixtures.Bytes("bad_import.wasm")) + `","level":"hard","order":1,"tool_ids":["bash"]}]}`
	_, err = e.client.PutPolicy(ctx, json.RawMessage(file))
	requireCode(t, err, http.StatusUnprocessableEntity, "module_not_found")

	// A file in the folder the host refuses (stored before its limits were
	// tightened, or put there by hand) is listed with the refusal, not
	// hidden, and cannot be bound either.
	bad := wasmfixtures.Bytes("bad_import.wasm")
	path := filepath.Join(e.modules, governance.SHA256Hex(bad)+".wasm")
	require.NoError(t, os.WriteFile(path, bad, 0o644))
	defer os.Remove(path)
	list, err := e.client.Modules(ctx)
	require.NoError(t, err)
	require.Len(t, list, len(beforeList)+1)
	var refused *api.StoredModule
	for i := range list {
		if list[i].SHA256 == governance.SHA256Hex(bad) {
			refused = &list[i]
		}
	}
	require.NotNil(t, refused)
	require.NotNil(t, refused.Refused)
	require.Equal(t, "gate.bad_import", refused.Refused.Code)
	_, err = e.client.Module(ctx, governance.SHA256Hex(bad))
	requireCode(t, err, http.StatusUnprocessableEntity, "gate.bad_import")
	_, err = e.client.PutPolicy(ctx, json.RawMessage(file))
	requireCode(t, err, http.StatusUnprocessableEntity, "module_not_found")
}

// TestMetrics_GatePoolSizes reads each gate's instance pool from /metrics
// after calls through the default policy's gates.
func TestMetrics_GatePoolSizes(t *testing.T) {
	e := sharedEnv(t)
	c, ctx := e.client, context.Background()
	task, err := c.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	res, err := c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args(map[string]any{"command": "rm -rf /"})}})
	require.NoError(t, err)
	require.Equal(t, api.DecisionDeny, res.Decision)
	body := readAll(t, e.get(t, "/metrics", testToken))
	for _, gate := range []string{"destructive", "permission"} {
		require.Regexp(t, `govhost_gate_pool_instances\{gate="`+gate+`"\} [1-9]`, body, "the warm-up created an instance")
		require.Regexp(t, `govhost_gate_pool_idle_instances\{gate="`+gate+`"\} [1-9]`, body, "idle between calls")
		require.Regexp(t, `govhost_gate_pool_size\{gate="`+gate+`"\} [1-9]`, body)
	}
}

// upload posts body to /v1/modules as it is.
func (e *env) upload(t *testing.T, body []byte, contentType, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", e.http.URL+"/v1/modules", bytes.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// manyFunctions is a valid module of n empty functions (over the default
// structural limit of 100 000 when n is larger; generated, too big to
// commit as a fixture).
func manyFunctions(n int) []byte {
	uleb := func(dst []byte, v uint32) []byte {
		for {
			b := byte(v & 0x7f)
			if v >>= 7; v != 0 {
				dst = append(dst, b|0x80)
				continue
			}
			return append(dst, b)
		}
	}
	section := func(dst []byte, id byte, body []byte) []byte {
		return append(uleb(append(dst, id), uint32(len(body))), body...)
	}
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = section(m, 1, []byte{1, 0x60, 0, 0}) // one type: () -> ()
	funcs := append(uleb(nil, uint32(n)), bytes.Repeat([]byte{0}, n)...)
	m = section(m, 3, funcs)
	code := uleb(nil, uint32(n))
	for i := 0; i < n; i++ {
		code = append(code, 2, 0, 0x0b) // body of 2 bytes: no locals, end
	}
	return section(m, 10, code)
}
