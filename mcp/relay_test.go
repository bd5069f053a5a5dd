package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/mcp"
)

// fakeGovernor allows every tool except those in deny; it records what it
// was asked and told.
type fakeGovernor struct {
	mu        sync.Mutex
	deny      map[string]string // tool id → message
	replace   json.RawMessage   // final arguments a transform produced
	calls     []controller.Call
	completed []controller.Outcome
	closed    bool
}

func (g *fakeGovernor) Authorize(ctx context.Context, c controller.Call) (controller.Permit, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, c)
	if msg, ok := g.deny[c.Tool]; ok {
		return controller.Permit{}, &governance.GovernanceDeniedError{Function: c.Tool, GateID: "g", ReasonCode: "test.deny", Message: msg}
	}
	args, err := governance.ParseArguments(c.Arguments)
	if err != nil {
		return controller.Permit{}, err
	}
	p := controller.Permit{ID: "p" + c.ToolCallID, Tool: c.Tool, ArgumentDigest: args.Digest, Arguments: args.Canonical}
	if g.replace != nil {
		r, _ := governance.ParseArguments(g.replace)
		p.ArgumentDigest, p.Arguments = r.Digest, r.Canonical
	}
	return p, nil
}

func (g *fakeGovernor) Complete(ctx context.Context, p controller.Permit, out controller.Outcome) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.completed = append(g.completed, out)
	return nil
}

func (g *fakeGovernor) Close(context.Context) (string, error) {
	g.closed = true
	return "mem", nil
}

func (g *fakeGovernor) outcomes() []controller.Outcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]controller.Outcome(nil), g.completed...)
}

// pipes is a relay under test: the test plays the client and the upstream.
type pipes struct {
	t         *testing.T
	toProxy   io.WriteCloser // client → proxy
	fromProxy *bufio.Reader  // proxy → client
	toUp      *bufio.Reader  // what the upstream receives
	fromUp    io.WriteCloser // upstream → proxy
	done      chan error
}

func startRelay(t *testing.T, p *mcp.Proxy) *pipes {
	t.Helper()
	cr, cw := io.Pipe()
	pr, pw := io.Pipe()
	ur, uw := io.Pipe()
	sr, sw := io.Pipe()
	x := &pipes{t: t, toProxy: cw, fromProxy: bufio.NewReader(pr), toUp: bufio.NewReader(ur), fromUp: sw, done: make(chan error, 1)}
	go func() { x.done <- p.Relay(context.Background(), cr, pw, mcp.Upstream{In: uw, Out: sr}) }()
	t.Cleanup(func() {
		_ = sw.Close()
		_ = cw.Close()
		_ = ur.Close()
		_ = pr.Close()
	})
	return x
}

func (x *pipes) client(line string) {
	x.t.Helper()
	_, err := io.WriteString(x.toProxy, line+"\n")
	require.NoError(x.t, err)
}

func (x *pipes) server(line string) {
	x.t.Helper()
	_, err := io.WriteString(x.fromUp, line+"\n")
	require.NoError(x.t, err)
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		l, _ := r.ReadString('\n')
		ch <- l
	}()
	select {
	case l := <-ch:
		require.True(t, strings.HasSuffix(l, "\n"), "a whole line: %q", l)
		return strings.TrimSuffix(l, "\n")
	case <-time.After(10 * time.Second):
		t.Fatal("no line")
		return ""
	}
}

func (x *pipes) upstreamGets() string { x.t.Helper(); return readLine(x.t, x.toUp) }
func (x *pipes) clientGets() string   { x.t.Helper(); return readLine(x.t, x.fromProxy) }

func newProxy(g mcp.Governor) *mcp.Proxy {
	return &mcp.Proxy{Name: "srv", Governor: g, Cwd: "/"}
}

// TestRelay_ForwardsUngovernedBytesUnchanged: whatever the proxy does not
// govern reaches the other side byte for byte, in both directions.
func TestRelay_ForwardsUngovernedBytesUnchanged(t *testing.T) {
	x := startRelay(t, newProxy(&fakeGovernor{}))
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{ "jsonrpc" : "2.0" , "method":"notifications/initialized" }`,
		`{"jsonrpc":"2.0","id":"a\u00e9","method":"x/unknown","params":{"z":1.50,"a":[1e3]},"extra":true}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]`,
		`{"jsonrpc":"2.0","id":5,"result":{"roots":[]}}`, // answer to a server request
	} {
		x.client(line)
		require.Equal(t, line, x.upstreamGets())
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"0"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"\u2028"}}`,
		`[{"jsonrpc":"2.0","id":7,"result":{}}]`,
		`{"jsonrpc":"2.0","id":"a\u00e9","error":{"code":-32601,"message":"Method not found"}}`,
	} {
		x.server(line)
		require.Equal(t, line, x.clientGets())
	}
}

// TestRelay_MalformedFromClient: JSON-RPC's answers (Parse error with a null
// id, Invalid Request), nothing forwarded, and the relay goes on.
func TestRelay_MalformedFromClient(t *testing.T) {
	x := startRelay(t, newProxy(&fakeGovernor{}))
	cases := []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"\xff\xfe", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{`{"jsonrpc":"1.0","id":3,"method":"x"}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request"}}`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
		{`42`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"govhost: invalid tools/call params: tools/call without a tool name"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"t","arguments":[1]}}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"govhost: tools/call arguments must be a JSON object"}}`},
	}
	for _, c := range cases {
		x.client(c.line)
		require.JSONEq(t, c.want, x.clientGets(), "for %q", c.line)
	}
	ping := `{"jsonrpc":"2.0","id":9,"method":"ping"}`
	x.client(ping)
	require.Equal(t, ping, x.upstreamGets(), "the relay still works and forwarded none of the above")
}

// TestRelay_MalformedFromUpstream: what is not a JSON-RPC message never
// reaches the client's stdout; a forwarded call answered that way fails.
func TestRelay_MalformedFromUpstream(t *testing.T) {
	g := &fakeGovernor{}
	x := startRelay(t, newProxy(g))
	x.client(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}`)
	x.upstreamGets()
	x.server(`Debugger listening on ws://127.0.0.1`)
	x.server(`{"jsonrpc":"2.0","id":1}`)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"govhost: the upstream answered with an invalid JSON-RPC message"}}`, x.clientGets())
	ok := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	x.server(ok)
	require.Equal(t, ok, x.clientGets(), "the garbage line was dropped, the relay goes on")
	require.Equal(t, []controller.Outcome{{Failed: true, ErrorClass: "invalid_response", Duration: g.outcomes()[0].Duration}}, g.outcomes())
}

// TestRelay_DeniedCallNeverReachesUpstream: the client gets a tool result
// with isError and the gate's message; the upstream receives nothing.
func TestRelay_DeniedCallNeverReachesUpstream(t *testing.T) {
	g := &fakeGovernor{deny: map[string]string{"srv/read_file": "permission denied: read is not allowed for `/etc/passwd`"}}
	x := startRelay(t, newProxy(g))
	x.client(`{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"read_file","arguments":{"path":"/etc/passwd"}}}`)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":"r1","result":{"content":[{"type":"text","text":"permission denied: read is not allowed for `+"`/etc/passwd`"+`"}],"isError":true}}`, x.clientGets())
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	x.client(ping)
	require.Equal(t, ping, x.upstreamGets(), "the first thing the upstream sees is the ping")
	require.Equal(t, "srv/read_file", g.calls[0].Tool)
	require.Empty(t, g.outcomes())
}

// TestRelay_AllowedCallCompletes: forwarded unchanged; the response
// completes the permit with the result's digest; isError and JSON-RPC
// errors are failures.
func TestRelay_AllowedCallCompletes(t *testing.T) {
	g := &fakeGovernor{}
	x := startRelay(t, newProxy(g))
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"b":1, "a":"x"},"_meta":{"progressToken":3}}}`
	x.client(req)
	require.Equal(t, req, x.upstreamGets())
	res := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`
	x.server(res)
	require.Equal(t, res, x.clientGets())

	x.client(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}`)
	x.upstreamGets()
	x.server(`{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}`)
	x.clientGets()
	x.client(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}`)
	x.upstreamGets()
	x.server(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}`)
	x.clientGets()

	out := g.outcomes()
	require.Len(t, out, 3)
	require.Equal(t, governance.SHA256Hex([]byte(`{"content":[{"type":"text","text":"ok"}]}`)), out[0].ResultDigest)
	require.False(t, out[0].Failed)
	require.Equal(t, "tool_error", out[1].ErrorClass)
	require.Equal(t, "rpc_error", out[2].ErrorClass)
	require.Equal(t, "1", g.calls[0].ToolCallID)
	require.Equal(t, map[string]string{"mcp_server": "srv", "mcp_tool": "t"}, g.calls[0].Metadata)
}

// TestRelay_ReplacedArgumentsAreForwarded: when a transform or an approver
// replaced the arguments, the upstream runs the final ones.
func TestRelay_ReplacedArgumentsAreForwarded(t *testing.T) {
	g := &fakeGovernor{replace: json.RawMessage(`{"path":"/ws/safe"}`)}
	x := startRelay(t, newProxy(g))
	x.client(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"path":"/etc"},"_meta":{"k":1}}}`)
	var got struct {
		ID     int `json:"id"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
			Meta      json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal([]byte(x.upstreamGets()), &got))
	require.Equal(t, 1, got.ID)
	require.Equal(t, "t", got.Params.Name)
	require.JSONEq(t, `{"path":"/ws/safe"}`, string(got.Params.Arguments))
	require.JSONEq(t, `{"k":1}`, string(got.Params.Meta))
}

// TestRelay_BatchWithToolsCallIsRefused: a batch carrying a governed
// request is refused element by element, never forwarded.
func TestRelay_BatchWithToolsCallIsRefused(t *testing.T) {
	g := &fakeGovernor{}
	x := startRelay(t, newProxy(g))
	x.client(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	var out []struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(x.clientGets()), &out))
	require.Len(t, out, 2, "one error per request, none for the notification")
	require.Equal(t, -32600, out[0].Error.Code)
	require.Empty(t, g.calls)
}

// TestRelay_HideDenied: tools/list loses the tools no binding names.
func TestRelay_HideDenied(t *testing.T) {
	p := newProxy(&fakeGovernor{})
	p.HideDenied = true
	p.Bound = func(_ context.Context, ids []string) (map[string]bool, error) {
		return map[string]bool{"srv/read_file": true}, nil
	}
	x := startRelay(t, p)
	x.client(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	x.upstreamGets()
	x.server(`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file","inputSchema":{"type":"object"}},{"name":"write_file","inputSchema":{"type":"object"}}],"nextCursor":"c"}}`)
	require.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"read_file","inputSchema":{"type":"object"}}],"nextCursor":"c"}}`, x.clientGets())
}

// TestRelay_UpstreamEndsWithCallInFlight: the client gets an error for
// the unanswered call and it is recorded failed.
func TestRelay_UpstreamEndsWithCallInFlight(t *testing.T) {
	g := &fakeGovernor{}
	x := startRelay(t, newProxy(g))
	x.client(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"t"}}`)
	x.upstreamGets()
	require.NoError(t, x.fromUp.Close())
	require.JSONEq(t, `{"jsonrpc":"2.0","id":8,"error":{"code":-32603,"message":"govhost: mcp: upstream closed before answering"}}`, x.clientGets())
	select {
	case err := <-x.done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("relay did not end")
	}
	require.Equal(t, "upstream_exited", g.outcomes()[0].ErrorClass)
}

// TestRelay_CallPipelinedBehindInitializeWaits: a tools/call sent before
// the initialize answer is decided with the upstream's mapping.
func TestRelay_CallPipelinedBehindInitializeWaits(t *testing.T) {
	g := &fakeGovernor{}
	x := startRelay(t, newProxy(g))
	x.client(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	x.upstreamGets()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"move_file","arguments":{"source":"/a","destination":"/b"}}}`
	x.client(call)
	x.server(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"secure-filesystem-server","version":"1"}}}`)
	x.clientGets()
	require.Equal(t, call, x.upstreamGets())
	require.Equal(t, "modify_file", g.calls[0].Operation)
	require.Equal(t, []string{"source", "destination"}, g.calls[0].PathArgs)
}
