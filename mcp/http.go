package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/govhost/govhost/internal/bearer"
)

// HTTPProxy is the Streamable HTTP intermediary: an MCP endpoint for
// clients in front of an upstream Streamable HTTP server. It follows the
// 2025-11-25 revision of the transport (what the reference SDKs speak:
// sessions by Mcp-Session-Id, a GET stream, DELETE to end a session, one
// JSON-RPC message per POST, JSON or SSE answers) and checks the request
// metadata headers of 2026-07-28 (MCP-Protocol-Version, Mcp-Method,
// Mcp-Name) against the body whenever a client sends them.
//
// Messages it does not govern pass byte for byte, SSE events one by one
// as they arrive. A tools/call is governed exactly as over stdio (the same
// decide/complete path); a denial is answered as a JSON tool result with
// isError and never reaches the upstream. One MCP session is one task;
// requests without a session (a stateless upstream) share one task for
// the proxy's lifetime. A task is closed and certified when its session
// is deleted, when the upstream reports it gone (404), and at Shutdown.
//
// Clients authenticate to the proxy with its own bearer token; their
// Authorization header, cookies and every header not part of MCP stay
// here. The upstream gets UpstreamToken, if any.
type HTTPProxy struct {
	// Proxy holds what every session shares: the server's name in tool
	// ids, the mapping, HideDenied and Bound, the log. Its Governor is not
	// used: each session has its own task (OpenTask).
	Proxy Proxy
	// Upstream is the upstream's MCP endpoint.
	Upstream string
	// UpstreamToken, when set, is sent upstream as a bearer token.
	UpstreamToken string
	// ClientToken is the bearer token clients must present (required).
	ClientToken string
	// AllowedOrigins are origins accepted beyond the loopback ones
	// (scheme://host[:port], exactly as browsers send them).
	AllowedOrigins []string
	// LoopbackHost refuses a request whose Host is not a loopback name
	// (localhost, 127.0.0.0/8, [::1]): for a proxy listening on loopback,
	// a page that rebound its own name to 127.0.0.1 still says its name
	// in Host, also on the requests that carry no Origin.
	LoopbackHost bool
	// OpenTask opens the task of a new session.
	OpenTask func(ctx context.Context) (Governor, error)
	// Certified hears where each closed session's certificate is.
	Certified func(session, where string, err error)
	// Client reaches the upstream (http.DefaultClient when nil; it must not
	// time out whole requests: SSE streams are long).
	Client *http.Client
	// IdleTimeout closes and certifies a session that has had no request
	// in flight (no open stream either) for this long: many clients never
	// DELETE their session. A request that comes back later with the same
	// session id opens a new task. Zero keeps sessions until DELETE, the
	// upstream's 404 or Shutdown. ReapIdle applies it.
	IdleTimeout time.Duration

	book        *toolBook // shared by the sessions: one upstream
	clientToken bearer.Token
	mu          sync.Mutex
	sessions    map[string]*httpSession
	shutdown    bool
}

// httpSession is one MCP session (one task).
type httpSession struct {
	*governed
	id string
	// ctx ends when the session closes: its governed calls' streams end
	// with it, even those whose answer no one waits for any more.
	ctx    context.Context
	cancel context.CancelFunc
	active sync.WaitGroup // governed calls of this session being relayed
	// busy counts the session's requests in flight (streams included) and
	// idleSince is when it last dropped to zero; both under HTTPProxy.mu.
	busy      int
	idleSince time.Time
}

// bind derives a request's context that also ends with the session.
func (s *httpSession) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// errShuttingDown refuses requests once Shutdown began.
var errShuttingDown = errors.New("govhost: the proxy is shutting down")

// maxRequestBody bounds a client's POST (a tool call's arguments).
const maxRequestBody = 16 << 20

// NewHTTPProxy checks the configuration.
func NewHTTPProxy(h *HTTPProxy) (*HTTPProxy, error) {
	u, err := url.Parse(h.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcp: upstream %q is not an http(s) URL", h.Upstream)
	}
	if h.ClientToken == "" {
		return nil, errors.New("mcp: the HTTP proxy needs a client token")
	}
	h.clientToken = bearer.New(h.ClientToken)
	if h.OpenTask == nil {
		return nil, errors.New("mcp: the HTTP proxy needs OpenTask")
	}
	if h.Proxy.Log == nil {
		h.Proxy.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if h.Client == nil {
		h.Client = http.DefaultClient
	}
	h.sessions = map[string]*httpSession{}
	h.book = newToolBook()
	return h, nil
}

// ServeHTTP serves the MCP endpoint.
func (h *HTTPProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.LoopbackHost && !loopbackName(hostOnly(r.Host)) {
		h.Proxy.Log.Warn("mcp: refused a request for a foreign host name", "host", r.Host)
		writeRPCError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest, "govhost: host not allowed")
		return
	}
	if !h.originAllowed(r.Header.Get("Origin")) {
		h.Proxy.Log.Warn("mcp: refused a request from a foreign origin", "origin", r.Header.Get("Origin"))
		writeRPCError(w, http.StatusForbidden, nil, jsonrpc.CodeInvalidRequest, "govhost: origin not allowed")
		return
	}
	if !h.clientToken.Matches(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="govhost-mcp"`)
		writeRPCError(w, http.StatusUnauthorized, nil, jsonrpc.CodeInvalidRequest, "govhost: missing or wrong bearer token")
		return
	}
	if s := h.enter(r.Header.Get(headerSessionID)); s != nil {
		defer h.leave(s)
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.relayWith(r.Context(), w, r, nil, nil, nil)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, jsonrpc.CodeInvalidRequest, "govhost: method not allowed")
	}
}

// originAllowed: no Origin (not a browser), a loopback origin, or one of
// AllowedOrigins. Anything else may be a DNS-rebinding page.
func (h *HTTPProxy) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	for _, o := range h.AllowedOrigins {
		if origin == o {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" {
		return false
	}
	return loopbackName(u.Hostname())
}

// loopbackName: localhost or a loopback address.
func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips the port (and an IPv6 literal's brackets) from a Host.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, text string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(errorResponse(id, code, text))
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// post handles one client message.
func (h *HTTPProxy) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, "govhost: request body too large or unreadable")
		return
	}
	msg, err := Parse(body)
	switch {
	case err != nil:
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "Parse error")
		return
	case msg.Kind == KindBatch:
		// 2025-06-18 removed JSON-RPC batching: one message per POST.
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "govhost: JSON-RPC batches are not part of MCP since 2025-06-18; send one message per POST")
		return
	case msg.Kind == KindInvalid:
		writeRPCError(w, http.StatusBadRequest, msg.ID, jsonrpc.CodeInvalidRequest, "Invalid Request")
		return
	}
	if err := checkRequestHeaders(r.Header, msg); err != nil {
		h.Proxy.Log.Warn("mcp: refused a request whose headers disagree with its body", "err", err)
		writeRPCError(w, http.StatusBadRequest, msg.ID, CodeHeaderMismatch, err.Error())
		return
	}
	sid := r.Header.Get(headerSessionID)
	switch {
	case msg.Kind == KindRequest && msg.Method == "tools/call":
		s, err := h.session(r.Context(), sid, true)
		if err != nil {
			writeRPCError(w, http.StatusServiceUnavailable, msg.ID, jsonrpc.CodeInternalError, "govhost: "+err.Error())
			return
		}
		defer s.active.Done()
		if tool, _ := nameOf(msg); tool != "" {
			if err := checkParamHeaders(r.Header, msg, s.declaredHeaders(tool)); err != nil {
				h.Proxy.Log.Warn("mcp: refused a request whose headers disagree with its body", "err", err)
				writeRPCError(w, http.StatusBadRequest, msg.ID, CodeHeaderMismatch, err.Error())
				return
			}
		}
		h.governCall(w, r, s, body, msg)
		return
	case msg.Kind == KindNotification && msg.Method == "notifications/cancelled":
		if s := h.existing(sid); s != nil {
			if id, ok := cancelledRequest(msg.Params); ok && s.cancelCall(r.Context(), id) {
				w.WriteHeader(http.StatusAccepted) // the call never reached the upstream
				return
			}
		}
	}
	var req *Message
	if msg.Kind == KindRequest {
		req = &msg
	}
	h.relayWith(r.Context(), w, r, body, req, nil)
}

// governCall decides a tools/call and relays it when allowed.
func (h *HTTPProxy) governCall(w http.ResponseWriter, r *http.Request, s *httpSession, body []byte, msg Message) {
	reqCtx, done := s.bind(r.Context())
	defer done()
	c, ctx, err := s.begin(reqCtx, msg.ID)
	if err != nil {
		writeJSON(w, errorResponse(msg.ID, jsonrpc.CodeInvalidRequest, err.Error()))
		return
	}
	v := s.decide(ctx, c, body, msg)
	switch {
	case v.reply != nil:
		writeJSON(w, v.reply)
		return
	case v.forward == nil:
		// Cancelled while held: the request gets no answer (an empty
		// stream), as MCP cancellation says.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		return
	}
	h.relayWith(ctx, w, r, v.forward, &msg, s)
}

// existing returns a known session, or nil.
func (h *HTTPProxy) existing(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// session returns the session of an id ("" for requests outside any
// session), opening its task on first sight. With active, the caller is
// one of the session's governed calls (active.Done when it ends): counted
// under the lock, so a closing session waits for every call that found it.
func (h *HTTPProxy) session(ctx context.Context, id string, active bool) (*httpSession, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shutdown {
		return nil, errShuttingDown
	}
	if s, ok := h.sessions[id]; ok {
		if active {
			s.active.Add(1)
		}
		return s, nil
	}
	// Opening a task is quick (one record, or one sidecar request); holding
	// the lock keeps two first requests of a session from opening two.
	gov, err := h.OpenTask(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("could not open the session's task: %w", err)
	}
	s := &httpSession{governed: newGoverned(&h.Proxy, gov, h.Proxy.Log.With("mcp_session", id), h.book), id: id}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.idleSince = time.Now()
	h.sessions[id] = s
	if active {
		s.active.Add(1)
	}
	h.Proxy.Log.Info("mcp: session opened", "mcp_session", id)
	return s, nil
}

// enter counts a request of a known session as in flight.
func (h *HTTPProxy) enter(id string) *httpSession {
	if id == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[id]
	if s != nil {
		s.busy++
	}
	return s
}

func (h *HTTPProxy) leave(s *httpSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.busy--; s.busy == 0 {
		s.idleSince = time.Now()
	}
}

// ReapIdle closes the sessions idle for IdleTimeout, checking a few times
// per timeout, until ctx ends. It does nothing when IdleTimeout is zero.
func (h *HTTPProxy) ReapIdle(ctx context.Context) {
	if h.IdleTimeout <= 0 {
		return
	}
	t := time.NewTicker(max(h.IdleTimeout/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.mu.Lock()
			var idle []string
			for id, s := range h.sessions {
				if s.busy == 0 && now.Sub(s.idleSince) >= h.IdleTimeout {
					idle = append(idle, id)
				}
			}
			h.mu.Unlock()
			for _, id := range idle {
				h.Proxy.Log.Info("mcp: session idle; closing it", "mcp_session", id, "idle_timeout", h.IdleTimeout)
				h.closeSession(context.WithoutCancel(ctx), id)
			}
		}
	}
}

// delete ends a session: DELETE is relayed; once the upstream accepted it
// (or says the session is already gone) the session's task is closed and
// certified before the client hears the answer.
func (h *HTTPProxy) delete(w http.ResponseWriter, r *http.Request) {
	resp, err := h.roundTrip(r.Context(), r, nil)
	if err != nil {
		writeRPCError(w, http.StatusBadGateway, nil, jsonrpc.CodeInternalError, "govhost: upstream unreachable")
		return
	}
	defer resp.Body.Close()
	sid := r.Header.Get(headerSessionID)
	if sid != "" && (resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusNotFound) {
		h.closeSession(context.WithoutCancel(r.Context()), sid)
	}
	copyResponseHeaders(w.Header(), resp.Header, h.Proxy.Log)
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// closeSession ends one session's task: held calls stop, forwarded calls
// still unanswered are recorded failed, the task is closed and certified.
func (h *HTTPProxy) closeSession(ctx context.Context, id string) {
	h.mu.Lock()
	s, ok := h.sessions[id]
	delete(h.sessions, id)
	h.mu.Unlock()
	if !ok {
		return
	}
	s.end()
	s.cancel()
	s.active.Wait()
	for _, cid := range s.end() {
		s.failCall(ctx, cid, "session_closed")
	}
	where, err := s.gov.Close(ctx)
	if err != nil {
		h.Proxy.Log.Error("mcp: session not certified", "mcp_session", id, "err", err)
	} else {
		h.Proxy.Log.Info("mcp: session closed", "mcp_session", id, "certificate", where)
	}
	if h.Certified != nil {
		h.Certified(id, where, err)
	}
}

// Shutdown closes and certifies every session; new requests are refused.
// Call it after the HTTP server stopped accepting requests.
func (h *HTTPProxy) Shutdown(ctx context.Context) {
	h.mu.Lock()
	h.shutdown = true
	ids := make([]string, 0, len(h.sessions))
	for id := range h.sessions {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.closeSession(ctx, id)
	}
}

// requestHeaders is what of a client's request goes upstream: the MCP
// headers (Mcp-*, covering the session id, protocol version, method and
// name headers and Mcp-Param-*), content negotiation, resumption. Never
// the client's Authorization or cookies.
func (h *HTTPProxy) requestHeaders(in http.Header) http.Header {
	out := http.Header{}
	for k, vs := range in {
		ck := http.CanonicalHeaderKey(k)
		switch {
		case strings.HasPrefix(ck, "Mcp-"), ck == "Accept", ck == "Content-Type", ck == "Last-Event-Id", ck == "User-Agent":
			out[ck] = append([]string(nil), vs...)
		}
	}
	if h.UpstreamToken != "" {
		out.Set("Authorization", "Bearer "+h.UpstreamToken)
	}
	return out
}

// copyResponseHeaders passes the upstream's MCP and stream headers; an
// authentication challenge is the upstream asking the proxy for its own
// credential, not the client, and stays here.
func copyResponseHeaders(dst, src http.Header, log *slog.Logger) {
	for k, vs := range src {
		ck := http.CanonicalHeaderKey(k)
		switch {
		case strings.HasPrefix(ck, "Mcp-"), ck == "Content-Type", ck == "Cache-Control", ck == "X-Accel-Buffering", ck == "Allow":
			dst[ck] = append([]string(nil), vs...)
		case ck == "Www-Authenticate":
			log.Warn("mcp: the upstream asks for credentials: give the proxy --upstream-token-file", "challenge", vs)
		}
	}
}

func (h *HTTPProxy) roundTrip(ctx context.Context, r *http.Request, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, h.Upstream, rd)
	if err != nil {
		return nil, err
	}
	req.Header = h.requestHeaders(r.Header)
	return h.Client.Do(req)
}

// relayWith sends body upstream under ctx and relays the answer: JSON
// whole, SSE event by event, each flushed as it arrives. Every response
// on it is looked at: the answer of a governed call completes its permit,
// initialize teaches the upstream's name (and the session id), tools/list
// the tools' annotations (and is filtered under HideDenied).
func (h *HTTPProxy) relayWith(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte, req *Message, s *httpSession) {
	resp, err := h.roundTrip(ctx, r, body)
	if err != nil {
		if s != nil && req != nil {
			s.failCall(ctx, req.ID, "upstream_unreachable")
		}
		h.Proxy.Log.Warn("mcp: upstream unreachable", "err", err)
		var id json.RawMessage
		if req != nil {
			id = req.ID
		}
		writeRPCError(w, http.StatusBadGateway, id, jsonrpc.CodeInternalError, "govhost: upstream unreachable")
		return
	}
	defer resp.Body.Close()
	h.Proxy.Log.Debug("mcp: upstream answered", "http", r.Method, "status", resp.StatusCode, "content_type", resp.Header.Get("Content-Type"))
	sid := r.Header.Get(headerSessionID)
	if got := resp.Header.Get(headerSessionID); got != "" {
		sid = got // initialize: the upstream assigns the session
	}
	if s == nil {
		if req != nil && (req.Method == "initialize" || req.Method == "tools/list") && resp.StatusCode/100 == 2 {
			// initialize and tools/list teach the session's mapping.
			if s, err = h.session(ctx, sid, false); err != nil {
				h.Proxy.Log.Warn("mcp: session not tracked", "err", err)
			}
		} else {
			// A GET stream may carry the resumed answer of a governed call.
			s = h.existing(sid)
		}
	}
	copyResponseHeaders(w.Header(), resp.Header, h.Proxy.Log)
	if resp.StatusCode == http.StatusNotFound && r.Header.Get(headerSessionID) != "" {
		// The upstream ended the session: so does its task (on its own
		// goroutine: closing waits for the session's governed calls, and
		// this request may be one).
		gone := r.Header.Get(headerSessionID)
		defer func() { go h.closeSession(context.WithoutCancel(ctx), gone) }()
	}
	if resp.StatusCode/100 != 2 {
		if s != nil && req != nil {
			s.failCall(ctx, req.ID, fmt.Sprintf("http_%d", resp.StatusCode))
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	watch := func(line []byte) []byte {
		if s == nil {
			return line
		}
		m, err := Parse(line)
		if err != nil || m.Kind != KindResponse {
			return line
		}
		if s.answered(ctx, m) || req == nil || idKey(m.ID) != idKey(req.ID) {
			return line
		}
		switch req.Method {
		case "initialize":
			s.learnServer(m.Result)
		case "tools/list":
			s.learnTools(m.Result)
			if h.Proxy.HideDenied {
				return s.hideDenied(ctx, m, line)
			}
		}
		return line
	}
	ctype := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ctype, "text/event-stream"):
		w.WriteHeader(resp.StatusCode)
		h.relaySSE(ctx, w, resp.Body, watch)
	case strings.HasPrefix(ctype, "application/json") && s != nil && req != nil:
		b, err := io.ReadAll(resp.Body)
		out := b
		if err == nil {
			out = watch(b)
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(out)
	default:
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}
	if s != nil && req != nil && s.id == "" {
		// No session, no resumption (2026-07-28): a call whose answer
		// did not come on its own stream never will.
		class := "no_response"
		if r.Context().Err() != nil {
			class = "cancelled"
		}
		s.failCall(ctx, req.ID, class)
	}
}

// relaySSE writes an SSE stream through event by event, each flushed at
// once; watch sees each event's message and may replace it.
func (h *HTTPProxy) relaySSE(ctx context.Context, w http.ResponseWriter, body io.Reader, watch func([]byte) []byte) {
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	sr := newSSEReader(body)
	for {
		ev, err := sr.next()
		out := ev.raw
		if ev.hasData {
			if changed := watch(ev.data); !bytes.Equal(changed, ev.data) {
				out = ev.withData(changed)
			}
		}
		if len(out) > 0 {
			if _, werr := w.Write(out); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				h.Proxy.Log.Warn("mcp: upstream stream broke", "err", err)
			}
			return
		}
	}
}
