package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/mcp"
)

// httpE2E is the HTTP mode end to end: the real TypeScript SDK's
// Streamable HTTP server (testdata/npm/http-upstream.mjs, which logs every
// request it gets) behind the real `govhost mcp --listen`, and the SDK's
// Streamable HTTP client (client.mjs with a URL).
type httpE2E struct {
	*e2e
	upstreamLog string
	proxyURL    string
	token       string // the proxy's client token
	upToken     string // the upstream's own credential
	proxy       *exec.Cmd
	npm         string
	env         []string
}

var proxyListening = regexp.MustCompile(`govhost mcp: (http://\S+/mcp) -> `)

type httpOptions struct {
	jsonAnswers bool // the upstream answers with JSON bodies, not SSE
	stateless   bool // the upstream has no sessions
	sidecar     bool // govern through a real govhost serve (--server)
	hide        bool
	approval    bool // side effects need approval
}

func startHTTPE2E(t *testing.T, o httpOptions) *httpE2E {
	t.Helper()
	npm := npmDir(t)
	bin, err := govhostBinary()
	require.NoError(t, err)
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(tmp, "allowed")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("inside the workspace\n"), 0o644))
	x := &httpE2E{
		e2e:         &e2e{t: t, root: root, data: filepath.Join(tmp, "data"), answers: map[int]json.RawMessage{}, stderr: &syncBuffer{}, lines: make(chan json.RawMessage, 64)},
		upstreamLog: filepath.Join(tmp, "upstream-requests.log"), npm: npm,
		upToken: "upstream-credential-" + uuid.NewString(),
		env:     append(os.Environ(), "GOVHOST_WASM_CACHE="+os.Getenv("GOVHOST_MCP_TEST_CACHE")),
	}

	// The upstream: the SDK's server, logging what reaches it.
	args := []string{filepath.Join(npm, "http-upstream.mjs"), root, x.upstreamLog}
	switch {
	case o.jsonAnswers:
		args = append(args, "json")
	case o.stateless:
		args = append(args, "stateless")
	}
	up := inGroup(exec.Command("node", args...))
	up.Stderr = x.stderr
	upOut, err := up.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, up.Start())
	t.Cleanup(func() { killGroup(up) })
	upURL := firstMatch(t, upOut, regexp.MustCompile(`listening (\S+)`), x.stderr)

	// The policy a user writes: the workspace template bound to three of the
	// upstream's four tools.
	tmplArgs := []string{"policy", "template", "workspace", "--root", root, "--tools", "up/read_note,up/write_note,up/slow_read"}
	if o.approval {
		tmplArgs = append(tmplArgs, "--require-approval-for-side-effects")
	}
	policy, err := exec.Command(bin, tmplArgs...).Output()
	require.NoError(t, err)
	policyPath := filepath.Join(tmp, "policy.json")
	require.NoError(t, os.WriteFile(policyPath, policy, 0o644))
	upTokenFile := filepath.Join(tmp, "upstream-token")
	require.NoError(t, os.WriteFile(upTokenFile, []byte(x.upToken+"\n"), 0o600))

	proxyArgs := []string{"mcp", "--listen", "127.0.0.1:0", "--upstream", upURL, "--name", "up", "--data", x.data,
		"--upstream-token-file", upTokenFile, "--log-level", "info"}
	if o.sidecar {
		url := x.startSidecar(bin, policyPath, x.env)
		proxyArgs = append(proxyArgs, "--server", url)
	} else {
		proxyArgs = append(proxyArgs, "--policy", policyPath)
	}
	if o.hide {
		proxyArgs = append(proxyArgs, "--hide-denied")
	}
	x.proxy = inGroup(exec.Command(bin, proxyArgs...))
	x.proxy.Env = x.env
	pr, pw := io.Pipe()
	x.proxy.Stderr = io.MultiWriter(x.stderr, pw)
	require.NoError(t, x.proxy.Start())
	t.Cleanup(func() {
		killGroup(x.proxy)
		if t.Failed() || os.Getenv("GOVHOST_MCP_TEST_LOG") != "" {
			t.Logf("upstream/proxy/client stderr:\n%s", x.stderr.String())
		}
	})
	x.proxyURL = firstMatch(t, pr, proxyListening, x.stderr)
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	tok, err := os.ReadFile(filepath.Join(x.data, "mcp-client-token"))
	require.NoError(t, err)
	x.token = strings.TrimSpace(string(tok))
	return x
}

// firstMatch reads lines until re matches and returns its first group.
func firstMatch(t *testing.T, r io.Reader, re *regexp.Regexp, log *syncBuffer) string {
	t.Helper()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				return
			}
		}
		close(found)
	}()
	select {
	case s, ok := <-found:
		require.True(t, ok, "stream ended before %s; stderr:\n%s", re, log.String())
		return s
	case <-time.After(60 * time.Second):
		t.Fatalf("no %s; stderr:\n%s", re, log.String())
		return ""
	}
}

// connect starts a real SDK client on the proxy's URL with token ("" sends
// none) and returns its e2e handle once it connected (or failed to).
func (x *httpE2E) connect(token string) *e2e {
	x.t.Helper()
	e := &e2e{t: x.t, root: x.root, data: x.data, answers: map[int]json.RawMessage{}, stderr: x.stderr, lines: make(chan json.RawMessage, 64)}
	e.client = inGroup(exec.Command("node", filepath.Join(x.npm, "client.mjs"), x.proxyURL))
	e.client.Env = append(x.env, "GOVHOST_MCP_TOKEN="+token)
	e.client.Stderr = x.stderr
	var err error
	e.stdin, err = e.client.StdinPipe()
	require.NoError(x.t, err)
	stdout, err := e.client.StdoutPipe()
	require.NoError(x.t, err)
	require.NoError(x.t, e.client.Start())
	x.t.Cleanup(func() { killGroup(e.client) })
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			e.lines <- json.RawMessage(append([]byte(nil), sc.Bytes()...))
		}
		close(e.lines)
	}()
	return e
}

// upstreamRequest is one line of the upstream's request log.
type upstreamRequest struct {
	HTTP          string          `json:"http"`
	Authorization *string         `json:"authorization"`
	Cookie        *string         `json:"cookie"`
	Session       *string         `json:"session"`
	Body          json.RawMessage `json:"body"`
}

func (x *httpE2E) upstreamRequests() []upstreamRequest {
	b, _ := os.ReadFile(x.upstreamLog)
	var out []upstreamRequest
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var r upstreamRequest
		require.NoError(x.t, json.Unmarshal(l, &r))
		out = append(out, r)
	}
	return out
}

var httpCertLine = regexp.MustCompile(`govhost mcp: session (\S*) closed; certificate: (\S+)`)

// certificateOf waits for the certificate line of one session.
func (x *httpE2E) certificateOf(session string) string {
	x.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range httpCertLine.FindAllStringSubmatch(x.stderr.String(), -1) {
			if m[1] == session {
				return m[2]
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	x.t.Fatalf("no certificate for session %s; stderr:\n%s", session, x.stderr.String())
	return ""
}

// stop ends the proxy as a user does (SIGINT) and waits for it.
func (x *httpE2E) stop() {
	x.t.Helper()
	require.NoError(x.t, x.proxy.Process.Signal(syscall.SIGINT))
	require.NoError(x.t, x.proxy.Wait())
}

// rawPost sends one hand-made request to the proxy.
func (x *httpE2E) rawPost(body string, header map[string]string) (int, map[string]json.RawMessage) {
	x.t.Helper()
	req, err := http.NewRequest(http.MethodPost, x.proxyURL, strings.NewReader(body))
	require.NoError(x.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(x.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(x.t, err)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

func rpcCode(t *testing.T, m map[string]json.RawMessage) int {
	t.Helper()
	var e struct {
		Code int `json:"code"`
	}
	require.NoError(t, json.Unmarshal(m["error"], &e), "%v", m)
	return e.Code
}

func sessionOf(t *testing.T, e *e2e) string {
	t.Helper()
	var ev struct {
		Session string `json:"session"`
	}
	require.NoError(t, json.Unmarshal(e.event("connected"), &ev))
	require.NotEmpty(t, ev.Session, "the upstream's Mcp-Session-Id reaches the client")
	return ev.Session
}

// TestE2E_HTTP: through the proxy, with the SDK upstream answering in SSE
// and in JSON: list, an allowed read and write forwarded and completed,
// denied calls the upstream never gets, a forwarded call the client
// cancels, the session deleted and certified, a second session certified
// when the proxy stops; the client's token never reaches the upstream,
// the upstream's own credential does.
func TestE2E_HTTP(t *testing.T) {
	for _, mode := range []string{"sse", "json"} {
		t.Run(mode, func(t *testing.T) {
			x := startHTTPE2E(t, httpOptions{jsonAnswers: mode == "json"})
			e := x.connect(x.token)
			session := sessionOf(t, e)

			list := e.answer(e.send(map[string]any{"op": "list"}))
			var tools []string
			require.NoError(t, json.Unmarshal(list["tools"], &tools))
			require.ElementsMatch(t, []string{"read_note", "write_note", "slow_read", "unbound_tool"}, tools)

			r := e.call("read_note", map[string]any{"path": filepath.Join(x.root, "notes.txt")})
			require.False(t, r.IsError, "%+v", r)
			require.Equal(t, "inside the workspace\n", r.Content[0].Text)
			r = e.call("write_note", map[string]any{"path": filepath.Join(x.root, "new.txt"), "content": "written"})
			require.False(t, r.IsError, "%+v", r)
			b, err := os.ReadFile(filepath.Join(x.root, "new.txt"))
			require.NoError(t, err)
			require.Equal(t, "written", string(b))

			r = e.call("read_note", map[string]any{"path": "/etc/passwd"})
			require.True(t, r.IsError)
			require.Contains(t, r.Content[0].Text, "/etc/passwd", "the model sees the gate's message")
			outside := filepath.Join(filepath.Dir(x.root), "outside.txt")
			r = e.call("write_note", map[string]any{"path": outside, "content": "x"})
			require.True(t, r.IsError)
			_, err = os.Stat(outside)
			require.ErrorIs(t, err, os.ErrNotExist)
			r = e.call("unbound_tool", map[string]any{})
			require.True(t, r.IsError)
			require.Contains(t, r.Content[0].Text, "policy.no_gate_binding")

			// A forwarded call the client cancels: recorded failed.
			a := e.answer(e.send(map[string]any{"op": "call", "name": "slow_read", "arguments": map[string]any{"path": filepath.Join(x.root, "notes.txt"), "ms": 20000}, "abort_ms": 3000}))
			require.Contains(t, a, "error", "%v", a)

			// A second session, left open: the proxy's shutdown certifies it.
			e2 := x.connect(x.token)
			session2 := sessionOf(t, e2)
			require.NotEqual(t, session, session2)
			// No tools/list of its own: the tools the first session listed
			// map its call (one upstream, one tool book).
			r = e2.call("read_note", map[string]any{"path": filepath.Join(x.root, "notes.txt")})
			require.False(t, r.IsError, "%+v", r)

			e.answer(e.send(map[string]any{"op": "close"})) // DELETE
			cert := x.certificateOf(session)

			var calls []string
			for _, req := range x.upstreamRequests() {
				require.NotNil(t, req.Authorization, "the upstream's credential is sent")
				require.Equal(t, "Bearer "+x.upToken, *req.Authorization, "never the client's token")
				require.Nil(t, req.Cookie)
				var m struct {
					Method string `json:"method"`
					Params struct {
						Name      string         `json:"name"`
						Arguments map[string]any `json:"arguments"`
					} `json:"params"`
				}
				if json.Unmarshal(req.Body, &m) == nil && m.Method == "tools/call" {
					calls = append(calls, m.Params.Name+" "+m.Params.Arguments["path"].(string))
				}
			}
			require.Equal(t, []string{
				"read_note " + filepath.Join(x.root, "notes.txt"), "write_note " + filepath.Join(x.root, "new.txt"),
				"slow_read " + filepath.Join(x.root, "notes.txt"), "read_note " + filepath.Join(x.root, "notes.txt"),
			}, calls, "denied calls never reach the upstream")
			require.NotContains(t, x.stderr.String(), x.token, "the client token is never logged")

			x.stop()
			cert2 := x.certificateOf(session2)
			types := e.verify(cert)
			require.Equal(t, governance.TaskClosed, types[len(types)-1])
			require.Equal(t, 6, count(types, governance.OperationStarted))
			require.Equal(t, 3, count(types, governance.OperationDenied))
			require.Equal(t, 2, count(types, governance.CallableCompleted))
			require.Equal(t, 1, count(types, governance.CallableFailed), "the cancelled forwarded read")
			types = e.verify(cert2)
			require.Equal(t, 1, count(types, governance.CallableCompleted))
		})
	}
}

// TestE2E_HTTPStateless: an upstream without sessions (the SDK's
// stateless mode): requests outside any session are one task, certified
// when the proxy stops.
func TestE2E_HTTPStateless(t *testing.T) {
	x := startHTTPE2E(t, httpOptions{stateless: true})
	e := x.connect(x.token)
	e.event("connected")
	e.answer(e.send(map[string]any{"op": "list"}))
	r := e.call("read_note", map[string]any{"path": filepath.Join(x.root, "notes.txt")})
	require.False(t, r.IsError, "%+v", r)
	require.Equal(t, "inside the workspace\n", r.Content[0].Text)
	r = e.call("read_note", map[string]any{"path": "/etc/passwd"})
	require.True(t, r.IsError)
	e.answer(e.send(map[string]any{"op": "close"}))
	for _, req := range x.upstreamRequests() {
		require.Nil(t, req.Session)
		require.NotContains(t, string(req.Body), "/etc/passwd")
	}
	x.stop()
	types := e.verify(x.certificateOf("(none)"))
	require.Equal(t, 2, count(types, governance.OperationStarted))
	require.Equal(t, 1, count(types, governance.OperationDenied))
	require.Equal(t, 1, count(types, governance.CallableCompleted))
}

// TestE2E_HTTPRefusals: what the proxy refuses before anything reaches
// the upstream: a foreign Origin (403), no or a wrong token (401, also for
// the real SDK client), metadata headers that disagree with the body (400,
// HeaderMismatch -32020), a batch (400).
func TestE2E_HTTPRefusals(t *testing.T) {
	x := startHTTPE2E(t, httpOptions{})
	before := len(x.upstreamRequests())
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_note","arguments":{"path":"/tmp/x","content":"x"}}}`
	auth := "Bearer " + x.token

	status, m := x.rawPost(init, map[string]string{"Authorization": auth, "Origin": "http://evil.example"})
	require.Equal(t, http.StatusForbidden, status, "%v", m)
	status, _ = x.rawPost(init, map[string]string{"Authorization": auth, "Origin": "http://127.0.0.1.evil.example:8080"})
	require.Equal(t, http.StatusForbidden, status)
	status, _ = x.rawPost(init, nil)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _ = x.rawPost(init, map[string]string{"Authorization": "Bearer " + strings.Repeat("0", len(x.token))})
	require.Equal(t, http.StatusUnauthorized, status)

	for _, h := range []map[string]string{
		{"Mcp-Method": "tools/list"},
		{"Mcp-Method": "tools/call", "Mcp-Name": "read_note"},
		{"Mcp-Method": "tools/call"},                                        // Mcp-Name is required with it
		{"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?cmVhZF9ub3Rl?="}, // "read_note", encoded
		{"Mcp-Protocol-Version": "2026-07-28"},                              // Mcp-Method is required from this version
	} {
		h["Authorization"] = auth
		status, m = x.rawPost(call, h)
		require.Equal(t, http.StatusBadRequest, status, "%v: %v", h, m)
		require.Equal(t, mcp.CodeHeaderMismatch, rpcCode(t, m), "%v", h)
	}
	status, m = x.rawPost("["+call+"]", map[string]string{"Authorization": auth})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, -32600, rpcCode(t, m))
	require.Len(t, x.upstreamRequests(), before, "nothing refused reached the upstream")

	// Matching headers, Base64 sentinel included, and a loopback Origin
	// pass through to the upstream (which answers the raw initialize).
	status, m = x.rawPost(init, map[string]string{"Authorization": auth, "Origin": "http://localhost:5173", "Mcp-Method": "initialize"})
	require.Equal(t, http.StatusOK, status, "%v", m)
	require.Len(t, x.upstreamRequests(), before+1)

	resp, err := http.Post(strings.TrimSuffix(x.proxyURL, "/mcp")+"/other", "application/json", strings.NewReader(init))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "one endpoint")

	// The real client without the token is refused.
	e := x.connect("")
	ev := e.event("connect_error")
	require.Contains(t, string(ev), "bearer token")
}

// TestE2E_HTTPSidecar: governed through a real govhost serve. --hide-denied
// leaves out of tools/list the tool no binding names (the sidecar's
// dry-run evaluate route answers which); a write held for approval is
// forwarded only once approved through the sidecar's API; a held write the
// client cancels is never forwarded and its approval is resolved; the
// session's certificate verifies on the sidecar.
func TestE2E_HTTPSidecar(t *testing.T) {
	x := startHTTPE2E(t, httpOptions{sidecar: true, hide: true, approval: true})
	ctx := context.Background()
	e := x.connect(x.token)
	session := sessionOf(t, e)
	list := e.answer(e.send(map[string]any{"op": "list"}))
	var tools []string
	require.NoError(t, json.Unmarshal(list["tools"], &tools))
	require.ElementsMatch(t, []string{"read_note", "write_note", "slow_read"}, tools, "unbound_tool is hidden")

	target := filepath.Join(x.root, "approved.txt")
	id := e.send(map[string]any{"op": "call", "name": "write_note", "arguments": map[string]any{"path": target, "content": "ok"}})
	var pending []api.Approval
	e.waitFor(func() bool {
		var err error
		pending, err = x.sidecar.Approvals(ctx)
		require.NoError(t, err)
		return len(pending) > 0
	})
	require.Equal(t, "up/write_note", pending[0].Tool)
	_, err := os.Stat(target)
	require.ErrorIs(t, err, os.ErrNotExist, "held: not forwarded yet")
	require.NoError(t, x.sidecar.ResolveApproval(ctx, pending[0].ApprovalID, api.ResolveApprovalRequest{Decision: api.DecisionAllow, Approver: &governance.ActorRef{Kind: "human", ID: "e2e"}}))
	a := e.answer(id)
	require.Contains(t, a, "result", "%v", a)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "ok", string(b))

	cancelled := filepath.Join(x.root, "cancelled.txt")
	a = e.answer(e.send(map[string]any{"op": "call", "name": "write_note", "arguments": map[string]any{"path": cancelled, "content": "no"}, "abort_ms": 1500}))
	require.Contains(t, a, "error", "%v", a)
	e.waitFor(func() bool {
		pending, err = x.sidecar.Approvals(ctx)
		require.NoError(t, err)
		return len(pending) == 0
	})

	r := e.call("read_note", map[string]any{"path": filepath.Join(x.root, "notes.txt")})
	require.False(t, r.IsError, "%+v", r)
	r = e.call("read_note", map[string]any{"path": "/etc/passwd"})
	require.True(t, r.IsError)
	for _, req := range x.upstreamRequests() {
		require.NotContains(t, string(req.Body), "/etc/passwd")
		require.NotContains(t, string(req.Body), "cancelled.txt", "a cancelled held call is never forwarded")
	}
	_, err = os.Stat(cancelled)
	require.ErrorIs(t, err, os.ErrNotExist)

	e.answer(e.send(map[string]any{"op": "close"}))
	where := x.certificateOf(session)
	require.Contains(t, where, "/v1/certificates/")
	m := regexp.MustCompile(`\(chain ([0-9a-f-]{36})\)`).FindStringSubmatch(x.stderr.String())
	require.NotNil(t, m)
	chain := uuid.MustParse(m[1])
	head, err := x.sidecar.ChainHead(ctx, chain)
	require.NoError(t, err)
	res, err := x.sidecar.VerifyChain(ctx, chain, head.Hash)
	require.NoError(t, err)
	require.True(t, res.Valid)
}
