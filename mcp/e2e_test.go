package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/mcp"
	"github.com/govhost/govhost/policy/policyfile"
	"github.com/govhost/govhost/server/client"
)

func TestMain(m *testing.M) {
	// One compilation cache for every proxy the tests start: the built-in
	// gates compile once (slow under -race), not once per session.
	cache, err := os.MkdirTemp("", "govhost-mcp-wasm-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("GOVHOST_MCP_TEST_CACHE", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

// binaries builds the real CLI and the reviewer proxy (mcp/internal/
// e2eproxy) once, without -race: they are what a client runs, and the
// built-in gates compiled under the race detector would take minutes.
var binaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "govhost-mcp-bin-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "github.com/govhost/govhost/cmd/govhost", "github.com/govhost/govhost/mcp/internal/e2eproxy")
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return dir, nil
})

func govhostBinary() (string, error) {
	dir, err := binaries()
	return filepath.Join(dir, "govhost"), err
}

// npmDir returns mcp/testdata/npm with its node_modules installed, or
// skips (fails under CI).
func npmDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata/npm")
	require.NoError(t, err)
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"))
	if nodeErr != nil || modErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or mcp/testdata/npm/node_modules missing (run `npm ci` in mcp/testdata/npm): %v %v", nodeErr, modErr)
		}
		t.Skip("needs node and `npm ci` in mcp/testdata/npm")
	}
	return dir
}

// e2e is one session: the real TypeScript SDK client runs this test binary
// as its proxy, which runs the real server-filesystem (through tap.mjs,
// which records what the upstream receives).
type e2e struct {
	t       *testing.T
	root    string // the allowed directory, resolved
	data    string
	tapLog  string
	client  *exec.Cmd
	stdin   io.WriteCloser
	mu      sync.Mutex
	answers map[int]json.RawMessage
	events  []string
	stderr  *syncBuffer
	next    int
	lines   chan json.RawMessage
	sidecar *client.Client
}

// inGroup starts cmd in its own process group and bounds how long Wait
// waits for its output pipes: a killed client whose children (the proxy,
// the upstream server) still hold stderr would otherwise keep Wait, and
// the whole test binary, waiting with no child of its own left.
func inGroup(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// killGroup kills cmd and every process it started, then reaps it.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = cmd.Wait()
}

var listening = regexp.MustCompile(`govhost serve: listening on (\S+)`)

// startSidecar runs govhost serve on a loopback port with the policy and
// returns its URL; e.sidecar is a client holding its token.
func (e *e2e) startSidecar(bin, policyPath string, env []string) string {
	e.t.Helper()
	srv := inGroup(exec.Command(bin, "serve", "--data", e.data, "--addr", "127.0.0.1:0", "--policy", policyPath, "--log-level", "warn"))
	srv.Env = env
	out, err := srv.StdoutPipe()
	require.NoError(e.t, err)
	srv.Stderr = e.stderr
	require.NoError(e.t, srv.Start())
	e.t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	})
	sc := bufio.NewScanner(out)
	url := ""
	for url == "" && sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	require.NotEmpty(e.t, url, "govhost serve did not start; stderr:\n%s", e.stderr.String())
	go func() { _, _ = io.Copy(io.Discard, out) }()
	e.sidecar, err = client.New(url, client.TokenFromFile(filepath.Join(e.data, "token")))
	require.NoError(e.t, err)
	return url
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fsTools are the server-filesystem tools the test policy binds.
var fsTools = []string{"read_text_file", "read_multiple_files", "write_file", "move_file", "list_directory", "create_directory", "edit_file"}

type e2eOptions struct {
	sideEffectApproval bool
	// reviewer runs the session in this test binary with an in-process
	// reviewer (approves, except arguments mentioning "held", which wait);
	// otherwise the session is the real `govhost mcp`.
	reviewer bool
	hide     bool
	// sidecar runs a real govhost serve with the policy and the proxy as
	// govhost mcp --server; approvals go through its API (e.sidecar).
	sidecar bool
	// defaultPolicy starts govhost mcp with no --policy on a fresh data
	// directory: the default coding-agent policy governs.
	defaultPolicy bool
}

func startE2E(t *testing.T, o e2eOptions) *e2e {
	t.Helper()
	npm := npmDir(t)
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(tmp, "allowed")
	require.NoError(t, os.MkdirAll(root, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("inside the workspace\n"), 0o644))
	var policy []byte
	if o.reviewer {
		// Only some of the server's tools are bound (for --hide-denied).
		ids := make([]string, len(fsTools))
		for i, tool := range fsTools {
			ids[i] = mcp.ToolID("fs", tool)
		}
		policy, err = policyfile.WorkspaceTemplate(policyfile.WorkspaceOptions{
			PolicyID: uuid.New(), Version: "1", Root: root, Tools: ids, RequireApprovalForSideEffects: o.sideEffectApproval,
		})
		require.NoError(t, err)
	} else {
		// The policy a user writes: the workspace template bound to the
		// filesystem server's tools.
		bin, err := govhostBinary()
		require.NoError(t, err)
		args := []string{"policy", "template", "workspace", "--root", root, "--mcp-filesystem", "fs"}
		if o.sideEffectApproval {
			args = append(args, "--require-approval-for-side-effects")
		}
		policy, err = exec.Command(bin, args...).Output()
		require.NoError(t, err)
	}
	policyPath := filepath.Join(tmp, "policy.json")
	require.NoError(t, os.WriteFile(policyPath, policy, 0o644))

	e := &e2e{t: t, root: root, data: filepath.Join(tmp, "data"), tapLog: filepath.Join(tmp, "upstream-input.log"),
		answers: map[int]json.RawMessage{}, stderr: &syncBuffer{}, lines: make(chan json.RawMessage, 64)}
	upstream := []string{"node", filepath.Join(npm, "tap.mjs"), e.tapLog,
		"node", filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), root}
	env := append(os.Environ(), "GOVHOST_WASM_CACHE="+os.Getenv("GOVHOST_MCP_TEST_CACHE"))
	var proxy []string
	if o.reviewer {
		dir, err := binaries()
		require.NoError(t, err)
		hide := ""
		if o.hide {
			hide = "1"
		}
		proxy = []string{filepath.Join(dir, "e2eproxy"), "--"}
		env = append(env, "GOVHOST_MCP_TEST_DATA="+e.data,
			"GOVHOST_MCP_TEST_POLICY="+policyPath, "GOVHOST_MCP_TEST_APPROVAL=reviewer", "GOVHOST_MCP_TEST_HIDE="+hide)
	} else {
		bin, err := govhostBinary()
		require.NoError(t, err)
		proxy = []string{bin, "mcp", "--name", "fs", "--data", e.data, "--policy", policyPath, "--log-level", "info"}
		if o.defaultPolicy {
			proxy = []string{bin, "mcp", "--name", "fs", "--data", e.data, "--log-level", "info"}
		}
		if o.sidecar {
			url := e.startSidecar(bin, policyPath, env)
			proxy = []string{bin, "mcp", "--name", "fs", "--server", url, "--token-file", filepath.Join(e.data, "token"), "--log-level", "info"}
		}
		if o.hide {
			proxy = append(proxy, "--hide-denied")
		}
		proxy = append(proxy, "--")
	}
	e.client = inGroup(exec.Command("node", append(append([]string{filepath.Join(npm, "client.mjs")}, proxy...), upstream...)...))
	e.client.Dir = tmp
	e.client.Env = env
	e.client.Stderr = e.stderr
	e.stdin, err = e.client.StdinPipe()
	require.NoError(t, err)
	stdout, err := e.client.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, e.client.Start())
	t.Cleanup(func() {
		killGroup(e.client)
		if t.Failed() || os.Getenv("GOVHOST_MCP_TEST_LOG") != "" {
			t.Logf("client/proxy/upstream stderr:\n%s", e.stderr.String())
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			e.lines <- json.RawMessage(append([]byte(nil), sc.Bytes()...))
		}
		close(e.lines)
	}()
	ev := e.event("connected")
	require.Contains(t, string(ev), "secure-filesystem-server")
	return e
}

// event waits for a client line with "event": name.
func (e *e2e) event(name string) json.RawMessage {
	e.t.Helper()
	return e.await(func(m map[string]json.RawMessage) bool { return string(m["event"]) == strconv.Quote(name) })
}

func (e *e2e) await(match func(map[string]json.RawMessage) bool) json.RawMessage {
	e.t.Helper()
	deadline := time.After(120 * time.Second)
	for {
		e.mu.Lock()
		for _, l := range e.pending() {
			var m map[string]json.RawMessage
			if json.Unmarshal(l, &m) == nil && match(m) {
				e.mu.Unlock()
				return l
			}
		}
		e.mu.Unlock()
		select {
		case l, ok := <-e.lines:
			if !ok {
				e.t.Fatalf("client ended; stderr:\n%s", e.stderr.String())
			}
			e.mu.Lock()
			e.events = append(e.events, string(l))
			e.mu.Unlock()
		case <-deadline:
			e.t.Fatalf("timed out; stderr:\n%s", e.stderr.String())
		}
	}
}

func (e *e2e) pending() []json.RawMessage {
	out := make([]json.RawMessage, len(e.events))
	for i, s := range e.events {
		out[i] = json.RawMessage(s)
	}
	return out
}

// send sends a step and returns its id.
func (e *e2e) send(step map[string]any) int {
	e.t.Helper()
	e.next++
	step["id"] = e.next
	b, err := json.Marshal(step)
	require.NoError(e.t, err)
	_, err = e.stdin.Write(append(b, '\n'))
	require.NoError(e.t, err)
	return e.next
}

func (e *e2e) answer(id int) map[string]json.RawMessage {
	e.t.Helper()
	l := e.await(func(m map[string]json.RawMessage) bool { return string(m["id"]) == strconv.Itoa(id) })
	var m map[string]json.RawMessage
	require.NoError(e.t, json.Unmarshal(l, &m))
	return m
}

type toolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (e *e2e) call(name string, args map[string]any) toolResult {
	e.t.Helper()
	a := e.answer(e.send(map[string]any{"op": "call", "name": name, "arguments": args}))
	require.Contains(e.t, a, "result", "answer: %v", a)
	var r toolResult
	require.NoError(e.t, json.Unmarshal(a["result"], &r))
	return r
}

// upstreamSaw returns the tools/call lines the upstream received.
func (e *e2e) upstreamSaw() string {
	b, _ := os.ReadFile(e.tapLog)
	return string(b)
}

// finish closes the client and returns the certificate file the proxy
// printed, after checking the proxy's own exit.
func (e *e2e) finish() string {
	e.t.Helper()
	e.answer(e.send(map[string]any{"op": "close"}))
	require.NoError(e.t, e.client.Wait())
	return e.certificate()
}

var certLine = regexp.MustCompile(`govhost mcp: session closed; certificate: (\S+)`)

func (e *e2e) certificate() string {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m := certLine.FindStringSubmatch(e.stderr.String()); m != nil {
			return m[1]
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("no certificate line; stderr:\n%s", e.stderr.String())
	return ""
}

// verify re-opens the data directory, verifies the session's chain against
// the certificate's head, and returns the chain's record types.
func (e *e2e) verify(certPath string) []governance.EvidenceType {
	e.t.Helper()
	b, err := os.ReadFile(certPath)
	require.NoError(e.t, err)
	var file struct {
		ChainID     uuid.UUID                  `json:"chain_id"`
		Certificate governance.TaskCertificate `json:"certificate"`
	}
	require.NoError(e.t, json.Unmarshal(b, &file))
	require.NoError(e.t, file.Certificate.Validate())
	ctx := context.Background()
	eng, err := govhost.Open(ctx, govhost.Options{Dir: e.data})
	require.NoError(e.t, err)
	defer eng.Close(ctx)
	res, err := eng.Evidence.Verify(ctx, file.ChainID, file.Certificate.EvidenceChainHead)
	require.NoError(e.t, err)
	require.True(e.t, res.Valid, "the session's chain verifies against its certificate: %+v", res)
	recs, err := eng.Evidence.Read(ctx, file.ChainID, -1)
	require.NoError(e.t, err)
	types := make([]governance.EvidenceType, len(recs))
	for i, r := range recs {
		types[i] = r.RecordType
		require.NotContains(e.t, r.PayloadJSON, "inside the workspace", "evidence never holds results")
	}
	return types
}

func count(types []governance.EvidenceType, t governance.EvidenceType) int {
	n := 0
	for _, x := range types {
		if x == t {
			n++
		}
	}
	return n
}

// TestE2E_FilesystemServer: list, an allowed read, a denied read and write
// the upstream never sees, several path arguments and arrays of paths, a
// malformed line from the client, then a certified session.
func TestE2E_FilesystemServer(t *testing.T) {
	e := startE2E(t, e2eOptions{})

	list := e.answer(e.send(map[string]any{"op": "list"}))
	var tools []string
	require.NoError(t, json.Unmarshal(list["tools"], &tools))
	require.Contains(t, tools, "read_text_file")
	require.Contains(t, tools, "move_file")

	r := e.call("read_text_file", map[string]any{"path": filepath.Join(e.root, "notes.txt")})
	require.False(t, r.IsError, "%+v", r)
	require.Equal(t, "inside the workspace\n", r.Content[0].Text)

	r = e.call("read_text_file", map[string]any{"path": "/etc/passwd"})
	require.True(t, r.IsError)
	require.Contains(t, r.Content[0].Text, "/etc/passwd", "the model sees the gate's message")
	outside := filepath.Join(filepath.Dir(e.root), "outside.txt")
	r = e.call("write_file", map[string]any{"path": outside, "content": "x"})
	require.True(t, r.IsError)
	_, err := os.Stat(outside)
	require.ErrorIs(t, err, os.ErrNotExist)

	// Several path arguments: both must be inside.
	r = e.call("move_file", map[string]any{"source": filepath.Join(e.root, "notes.txt"), "destination": outside})
	require.True(t, r.IsError, "a destination outside the root is denied")
	r = e.call("move_file", map[string]any{"source": filepath.Join(e.root, "notes.txt"), "destination": filepath.Join(e.root, "moved.txt")})
	require.False(t, r.IsError, "%+v", r)
	// An array of paths: every element must be inside.
	r = e.call("read_multiple_files", map[string]any{"paths": []string{filepath.Join(e.root, "moved.txt"), "/etc/hostname"}})
	require.True(t, r.IsError)
	r = e.call("read_multiple_files", map[string]any{"paths": []string{filepath.Join(e.root, "moved.txt")}})
	require.False(t, r.IsError, "%+v", r)
	require.Contains(t, r.Content[0].Text, "inside the workspace")

	// Relative paths are refused for this server (it resolves them against
	// its allowed directories, not its working directory).
	r = e.call("read_text_file", map[string]any{"path": "moved.txt"})
	require.True(t, r.IsError)
	require.Contains(t, r.Content[0].Text, "absolute path")

	// A forwarded call the client cancels (a read blocked on a FIFO) is
	// recorded failed; the cancellation reaches the upstream.
	fifo := filepath.Join(e.root, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	a := e.answer(e.send(map[string]any{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": fifo}, "abort_ms": 1500}))
	require.Contains(t, a, "error", "%v", a)
	e.waitFor(func() bool { return strings.Contains(e.upstreamSaw(), "notifications/cancelled") })
	unblock, err := os.OpenFile(fifo, os.O_WRONLY, 0) // let the server's read finish
	require.NoError(t, err)
	require.NoError(t, unblock.Close())

	saw := e.upstreamSaw()
	require.NotContains(t, saw, "/etc/passwd", "a denied call never reaches the upstream")
	require.NotContains(t, saw, "outside.txt")
	require.NotContains(t, saw, "/etc/hostname")
	require.Contains(t, saw, `"tools/call"`)

	types := e.verify(e.finish())
	require.Equal(t, governance.TaskClosed, types[len(types)-1])
	require.Equal(t, 8, count(types, governance.OperationStarted))
	require.Equal(t, 4, count(types, governance.OperationDenied))
	require.Equal(t, 3, count(types, governance.CallableCompleted))
	require.Equal(t, 1, count(types, governance.CallableFailed), "the cancelled forwarded read")
}

// TestE2E_FilesystemServer_DefaultPolicy: `govhost mcp -- server-filesystem
// DIR` with no --policy starts under the default coding-agent policy
// (balanced): reads and writes in the workspace (the proxy's working
// directory) run, a credential is denied wherever it is named (a path, an
// element of read_multiple_files' paths, move_file's source), a write
// outside the workspace is denied, and none of those reach the server.
func TestE2E_FilesystemServer_DefaultPolicy(t *testing.T) {
	e := startE2E(t, e2eOptions{defaultPolicy: true})
	require.Contains(t, e.stderr.String(), "@balanced-1", "the proxy names the default policy it runs under")

	r := e.call("read_text_file", map[string]any{"path": filepath.Join(e.root, "notes.txt")})
	require.False(t, r.IsError, "%+v", r)
	require.Equal(t, "inside the workspace\n", r.Content[0].Text)
	r = e.call("write_file", map[string]any{"path": filepath.Join(e.root, "new.txt"), "content": "written"})
	require.False(t, r.IsError, "%+v", r)
	got, err := os.ReadFile(filepath.Join(e.root, "new.txt"))
	require.NoError(t, err)
	require.Equal(t, "written", string(got))

	key := filepath.Join(e.root, ".ssh", "id_ed25519")
	require.NoError(t, os.MkdirAll(filepath.Dir(key), 0o700))
	require.NoError(t, os.WriteFile(key, []byte("PRIVATE KEY MATERIAL"), 0o600))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_text_file", map[string]any{"path": key}},
		{"read_multiple_files", map[string]any{"paths": []string{filepath.Join(e.root, "notes.txt"), key}}},
		{"move_file", map[string]any{"source": key, "destination": filepath.Join(e.root, "key.txt")}},
		{"write_file", map[string]any{"path": filepath.Join(filepath.Dir(filepath.Dir(e.root)), "outside.txt"), "content": "x"}},
	} {
		r = e.call(c.tool, c.args)
		require.True(t, r.IsError, "%s %v must be denied", c.tool, c.args)
	}
	saw := e.upstreamSaw()
	require.NotContains(t, saw, "id_ed25519", "a denied call never reaches the upstream")
	require.NotContains(t, saw, "outside.txt")
	types := e.verify(e.finish())
	require.Equal(t, 4, count(types, governance.OperationDenied))
}

// TestE2E_Approvals: side effects ask a reviewer; an approved write runs,
// a held write the client cancels never reaches the upstream and is
// recorded denied; --hide-denied leaves unbound tools out of tools/list.
func TestE2E_Approvals(t *testing.T) {
	e := startE2E(t, e2eOptions{sideEffectApproval: true, reviewer: true, hide: true})
	list := e.answer(e.send(map[string]any{"op": "list"}))
	var tools []string
	require.NoError(t, json.Unmarshal(list["tools"], &tools))
	require.ElementsMatch(t, fsTools, tools, "only the tools the policy binds are listed")

	// A write inside the root asks for approval; the reviewer approves it.
	r := e.call("write_file", map[string]any{"path": filepath.Join(e.root, "approved.txt"), "content": "ok"})
	require.False(t, r.IsError, "%+v", r)
	b, err := os.ReadFile(filepath.Join(e.root, "approved.txt"))
	require.NoError(t, err)
	require.Equal(t, "ok", string(b))

	// A write held for approval and cancelled by the client is never
	// forwarded, and is recorded as denied.
	held := filepath.Join(e.root, "held.txt")
	a := e.answer(e.send(map[string]any{"op": "call", "name": "write_file", "arguments": map[string]any{"path": held, "content": "x"}, "abort_ms": 300}))
	require.Contains(t, a, "error", "%v", a)
	e.waitFor(func() bool { return strings.Contains(e.stderr.String(), "held call cancelled by the client") })
	_, err = os.Stat(held)
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NotContains(t, e.upstreamSaw(), "held.txt", "a held call never reaches the upstream")
	types := e.verify(e.finish())
	require.Equal(t, 2, count(types, governance.OperationStarted))
	require.Equal(t, 1, count(types, governance.OperationDenied))
	require.Equal(t, 1, count(types, governance.CallableCompleted))
}

// TestE2E_SidecarApproval: govhost mcp --server against a running govhost
// serve: a write held for approval is approved through the sidecar's API
// and runs; a denied read never reaches the upstream; the session's task is
// certified by the sidecar and its chain verifies there.
func TestE2E_SidecarApproval(t *testing.T) {
	e := startE2E(t, e2eOptions{sidecar: true, sideEffectApproval: true})
	ctx := context.Background()
	target := filepath.Join(e.root, "approved.txt")
	id := e.send(map[string]any{"op": "call", "name": "write_file", "arguments": map[string]any{"path": target, "content": "ok"}})
	var pending []api.Approval
	e.waitFor(func() bool {
		var err error
		pending, err = e.sidecar.Approvals(ctx)
		require.NoError(t, err)
		return len(pending) > 0
	})
	require.Equal(t, "fs/write_file", pending[0].Tool)
	_, err := os.Stat(target)
	require.ErrorIs(t, err, os.ErrNotExist, "held: not forwarded yet")
	require.NoError(t, e.sidecar.ResolveApproval(ctx, pending[0].ApprovalID, api.ResolveApprovalRequest{Decision: api.DecisionAllow, Approver: &governance.ActorRef{Kind: "human", ID: "e2e"}}))
	a := e.answer(id)
	require.Contains(t, a, "result", "%v", a)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "ok", string(b))

	r := e.call("read_text_file", map[string]any{"path": "/etc/passwd"})
	require.True(t, r.IsError)
	require.NotContains(t, e.upstreamSaw(), "/etc/passwd")

	e.answer(e.send(map[string]any{"op": "close"}))
	require.NoError(t, e.client.Wait())
	where := e.certificate()
	require.Contains(t, where, "/v1/certificates/")
	m := regexp.MustCompile(`\(chain ([0-9a-f-]{36})\)`).FindStringSubmatch(e.stderr.String())
	require.NotNil(t, m)
	chain := uuid.MustParse(m[1])
	head, err := e.sidecar.ChainHead(ctx, chain)
	require.NoError(t, err)
	res, err := e.sidecar.VerifyChain(ctx, chain, head.Hash)
	require.NoError(t, err)
	require.True(t, res.Valid)
}

// TestE2E_UpstreamKilledMidCall: a read blocks on a FIFO; the upstream is
// killed; the client gets an error, the operation is recorded failed, the
// task still certifies, and the proxy exits with the upstream's status.
func TestE2E_UpstreamKilledMidCall(t *testing.T) {
	e := startE2E(t, e2eOptions{})
	fifo := filepath.Join(e.root, "pipe")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	id := e.send(map[string]any{"op": "call", "name": "read_text_file", "arguments": map[string]any{"path": fifo}})
	pid := e.upstreamPID()
	e.waitFor(func() bool { return strings.Contains(e.upstreamSaw(), "pipe") })
	time.Sleep(200 * time.Millisecond) // let the server open the FIFO
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	a := e.answer(id)
	require.Contains(t, a, "error", "the client gets an error: %v", a)
	e.event("closed")
	types := e.verify(e.certificate())
	require.Equal(t, 1, count(types, governance.CallableFailed))
	require.NoError(t, e.client.Wait(), "the client exits when its transport closes")
	require.Contains(t, e.stderr.String(), "session closed; certificate")
}

func (e *e2e) waitFor(cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("condition not met; stderr:\n%s", e.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var pidLine = regexp.MustCompile(`tap: upstream pid (\d+)`)

func (e *e2e) upstreamPID() int {
	e.t.Helper()
	var pid int
	e.waitFor(func() bool {
		m := pidLine.FindStringSubmatch(e.stderr.String())
		if m != nil {
			pid, _ = strconv.Atoi(m[1])
		}
		return m != nil
	})
	return pid
}
