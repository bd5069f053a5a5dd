package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/mcp"
)

// holdingGovernor is fakeGovernor, except that a call of hold waits until
// its context ends (an approval nobody gives).
type holdingGovernor struct {
	*fakeGovernor
	hold string
}

func (g *holdingGovernor) Authorize(ctx context.Context, c controller.Call) (controller.Permit, error) {
	if c.Tool == g.hold {
		<-ctx.Done()
		return controller.Permit{}, ctx.Err()
	}
	return g.fakeGovernor.Authorize(ctx, c)
}

// goSDKUpstream is the official Go SDK's Streamable HTTP server with three
// tools; it counts the calls that reach it and the Authorization headers
// it sees.
type goSDKUpstream struct {
	calls sync.Map // tool → *atomic.Int32
	mu    sync.Mutex
	auth  []string
	// forget makes it answer 404 to every request of a session, as a
	// server does that ended (or lost) the session.
	forget atomic.Bool
}

func (u *goSDKUpstream) count(tool string) int32 {
	v, _ := u.calls.LoadOrStore(tool, new(atomic.Int32))
	return v.(*atomic.Int32).Load()
}

func (u *goSDKUpstream) handler() http.Handler {
	server := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-upstream", Version: "1"}, nil)
	closed := false
	for _, name := range []string{"echo", "forbidden", "held"} {
		sdk.AddTool(server, &sdk.Tool{Name: name, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &closed}},
			func(ctx context.Context, req *sdk.CallToolRequest, in struct {
				Text string `json:"text"`
			}) (*sdk.CallToolResult, any, error) {
				v, _ := u.calls.LoadOrStore(name, new(atomic.Int32))
				v.(*atomic.Int32).Add(1)
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
			})
	}
	// A tool that asks clients to mirror an argument into a header
	// (x-mcp-header, MCP 2026-07-28).
	server.AddTool(&sdk.Tool{Name: "regional", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			v, _ := u.calls.LoadOrStore("regional", new(atomic.Int32))
			v.(*atomic.Int32).Add(1)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		u.mu.Unlock()
		if u.forget.Load() && r.Header.Get("Mcp-Session-Id") != "" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	})
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

const testClientToken = "client-token-0123456789abcdef0123456789abcdef"

// TestHTTPProxy_GoSDK: the official Go SDK's client and server through the
// intermediary, in process (under -race): tools listed, an allowed call
// forwarded and completed, a denied one never reaching the upstream, a
// held one the client cancels never forwarded, the session's task closed
// on DELETE, the client's token never upstream.
func TestHTTPProxy_GoSDK(t *testing.T) {
	up := &goSDKUpstream{}
	upstream := httptest.NewServer(up.handler())
	defer upstream.Close()
	var mu sync.Mutex
	var govs []*holdingGovernor
	h, err := mcp.NewHTTPProxy(&mcp.HTTPProxy{
		Proxy:    mcp.Proxy{Name: "go"},
		Upstream: upstream.URL, UpstreamToken: "upstream-token", ClientToken: testClientToken,
		OpenTask: func(context.Context) (mcp.Governor, error) {
			mu.Lock()
			defer mu.Unlock()
			g := &holdingGovernor{fakeGovernor: &fakeGovernor{deny: map[string]string{"go/forbidden": "no, not this one"}}, hold: "go/held"}
			govs = append(govs, g)
			return g, nil
		},
	})
	require.NoError(t, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()

	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: proxy.URL, HTTPClient: &http.Client{Transport: bearer{testClientToken}}}, nil)
	require.NoError(t, err)
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 4)

	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	require.False(t, r.IsError)
	require.Equal(t, "echo: hi", r.Content[0].(*sdk.TextContent).Text)
	require.EqualValues(t, 1, up.count("echo"))

	r, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "forbidden", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.Equal(t, "no, not this one", r.Content[0].(*sdk.TextContent).Text)

	heldCtx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = cs.CallTool(heldCtx, &sdk.CallToolParams{Name: "held", Arguments: map[string]any{"text": "x"}})
	cancel()
	require.Error(t, err, "the client gave up on the held call")

	require.NoError(t, cs.Close()) // DELETE
	mu.Lock()
	require.Len(t, govs, 1, "one session, one task")
	g := govs[0]
	mu.Unlock()
	g.mu.Lock()
	closed, calls := g.closed, len(g.calls)
	g.mu.Unlock()
	require.True(t, closed, "the DELETE closed the session's task before it was answered")
	require.Equal(t, 2, calls, "echo and forbidden were decided; held never got an answer")
	out := g.outcomes()
	require.Len(t, out, 1)
	require.False(t, out[0].Failed)
	require.NotEmpty(t, out[0].ResultDigest)
	require.Zero(t, up.count("forbidden"), "a denied call never reaches the upstream")
	require.Zero(t, up.count("held"), "a cancelled held call is never forwarded")
	up.mu.Lock()
	defer up.mu.Unlock()
	require.NotEmpty(t, up.auth)
	for _, a := range up.auth {
		require.Equal(t, "Bearer upstream-token", a, "never the client's token")
	}
}

// TestHTTPProxy_Refusals: refused before anything reaches the upstream.
func TestHTTPProxy_Refusals(t *testing.T) {
	up := &goSDKUpstream{}
	upstream := httptest.NewServer(up.handler())
	defer upstream.Close()
	h, err := mcp.NewHTTPProxy(&mcp.HTTPProxy{
		Proxy: mcp.Proxy{Name: "go"}, Upstream: upstream.URL, ClientToken: testClientToken, AllowedOrigins: []string{"https://app.example"}, LoopbackHost: true,
		OpenTask: func(context.Context) (mcp.Governor, error) { return &fakeGovernor{}, nil },
	})
	require.NoError(t, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	post := func(body string, header map[string]string) int {
		req, err := http.NewRequest(http.MethodPost, proxy.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+testClientToken)
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	require.Equal(t, http.StatusForbidden, post(list, map[string]string{"Host": "rebound.evil.example:8765"}), "DNS rebinding, no Origin")
	require.Equal(t, http.StatusForbidden, post(list, map[string]string{"Origin": "https://evil.example"}))
	require.Equal(t, http.StatusForbidden, post(list, map[string]string{"Origin": "null"}))
	require.Equal(t, http.StatusUnauthorized, post(list, map[string]string{"Authorization": "Basic eDp5"}))
	require.Equal(t, http.StatusBadRequest, post(list, map[string]string{"Mcp-Method": "tools/call"}))
	require.Equal(t, http.StatusBadRequest, post("not json", nil))
	require.Equal(t, http.StatusBadRequest, post(`{"jsonrpc":"1.0","id":1,"method":"x"}`, nil))
	require.Equal(t, http.StatusBadRequest, post("["+list+"]", nil))
	up.mu.Lock()
	require.Empty(t, up.auth, "nothing reached the upstream")
	up.mu.Unlock()
	// Allowed origins and a matching header go through (the SDK server
	// answers the session-less request itself).
	require.NotEqual(t, http.StatusForbidden, post(list, map[string]string{"Origin": "https://app.example", "Mcp-Method": "tools/list"}))
	require.NotEqual(t, http.StatusForbidden, post(list, map[string]string{"Origin": "http://[::1]:3000"}))
	up.mu.Lock()
	require.Len(t, up.auth, 2)
	up.mu.Unlock()

	_, err = mcp.NewHTTPProxy(&mcp.HTTPProxy{Upstream: upstream.URL, OpenTask: func(context.Context) (mcp.Governor, error) { return nil, nil }})
	require.ErrorContains(t, err, "client token")
	_, err = mcp.NewHTTPProxy(&mcp.HTTPProxy{Upstream: "file:///x", ClientToken: testClientToken})
	require.ErrorContains(t, err, "not an http(s) URL")
}

// TestHTTPProxy_UpstreamEndsSession: a forwarded call answered 404 (the
// upstream no longer knows the session) is recorded failed, and the
// session's task is closed and certified.
func TestHTTPProxy_UpstreamEndsSession(t *testing.T) {
	up := &goSDKUpstream{}
	upstream := httptest.NewServer(up.handler())
	defer upstream.Close()
	gov := &fakeGovernor{}
	certified := make(chan string, 1)
	h, err := mcp.NewHTTPProxy(&mcp.HTTPProxy{
		Proxy: mcp.Proxy{Name: "go"}, Upstream: upstream.URL, ClientToken: testClientToken,
		OpenTask:  func(context.Context) (mcp.Governor, error) { return gov, nil },
		Certified: func(session, where string, err error) { certified <- session },
	})
	require.NoError(t, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: proxy.URL, HTTPClient: &http.Client{Transport: bearer{testClientToken}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer cs.Close()
	up.forget.Store(true)
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.Error(t, err)
	select {
	case id := <-certified:
		require.Equal(t, cs.ID(), id)
	case <-time.After(10 * time.Second):
		t.Fatal("the session's task was not closed")
	}
	out := gov.outcomes()
	require.Len(t, out, 1)
	require.True(t, out[0].Failed)
	require.Equal(t, "http_404", out[0].ErrorClass)
}

// TestHTTPProxy_ParamHeaders: a tool declares x-mcp-header; once the
// session listed it, a tools/call whose Mcp-Param-Region disagrees with
// its region argument is refused (400, -32020) and never reaches the
// upstream; one that agrees is governed and forwarded.
func TestHTTPProxy_ParamHeaders(t *testing.T) {
	up := &goSDKUpstream{}
	upstream := httptest.NewServer(up.handler())
	defer upstream.Close()
	h, err := mcp.NewHTTPProxy(&mcp.HTTPProxy{
		Proxy: mcp.Proxy{Name: "go"}, Upstream: upstream.URL, ClientToken: testClientToken,
		OpenTask: func(context.Context) (mcp.Governor, error) { return &fakeGovernor{}, nil },
	})
	require.NoError(t, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: proxy.URL, HTTPClient: &http.Client{Transport: bearer{testClientToken}}}, nil)
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.ListTools(ctx, nil)
	require.NoError(t, err)
	post := func(region string) (int, string) {
		body := `{"jsonrpc":"2.0","id":"raw-1","method":"tools/call","params":{"name":"regional","arguments":{"region":"us-west1"}}}`
		req, err := http.NewRequest(http.MethodPost, proxy.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+testClientToken)
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "regional")
		if region != "" {
			req.Header.Set("Mcp-Param-Region", region)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post("eu-west1")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "-32020")
	status, body = post("")
	require.Equal(t, http.StatusBadRequest, status, "Mcp-Method sent, the declared header missing: %s", body)
	require.Zero(t, up.count("regional"))
	status, body = post("us-west1")
	require.Equal(t, http.StatusOK, status, body)
	require.EqualValues(t, 1, up.count("regional"))
}

// TestHTTPProxy_IdleSession: a session with nothing in flight for
// IdleTimeout is closed and certified; the same session id coming back
// later is governed in a new task.
func TestHTTPProxy_IdleSession(t *testing.T) {
	up := &goSDKUpstream{}
	upstream := httptest.NewServer(up.handler())
	defer upstream.Close()
	var mu sync.Mutex
	var govs []*fakeGovernor
	certified := make(chan string, 4)
	h, err := mcp.NewHTTPProxy(&mcp.HTTPProxy{
		Proxy: mcp.Proxy{Name: "go"}, Upstream: upstream.URL, ClientToken: testClientToken, IdleTimeout: 500 * time.Millisecond,
		OpenTask: func(context.Context) (mcp.Governor, error) {
			mu.Lock()
			defer mu.Unlock()
			g := &fakeGovernor{}
			govs = append(govs, g)
			return g, nil
		},
		Certified: func(session, where string, err error) { certified <- session },
	})
	require.NoError(t, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.ReapIdle(ctx)
	client := sdk.NewClient(&sdk.Implementation{Name: "go-sdk-client", Version: "1"}, nil)
	// No standing GET stream: an open stream keeps a session busy.
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: proxy.URL, HTTPClient: &http.Client{Transport: bearer{testClientToken}}, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "1"}})
	require.NoError(t, err)
	select {
	case id := <-certified:
		require.Equal(t, cs.ID(), id)
	case <-time.After(10 * time.Second):
		t.Fatal("the idle session was not closed")
	}
	mu.Lock()
	before := len(govs)
	mu.Unlock()
	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "2"}})
	require.NoError(t, err)
	require.False(t, r.IsError)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, govs, before+1, "the session came back: a new task")
	require.Len(t, govs[len(govs)-1].outcomes(), 1)
}
