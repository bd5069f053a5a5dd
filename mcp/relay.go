package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// Proxy relays one MCP session between a client and an upstream server and
// governs its tools/call requests. Everything it does not govern is
// forwarded byte for byte, one line per message; what it answers itself
// (denials, refusals, errors for calls the upstream will never answer) it
// encodes with the SDK's message types.
type Proxy struct {
	// Name is the server's name in tool ids ("<name>/<tool>").
	Name     string
	Governor Governor
	Mapper   Mapper
	// Cwd is the directory relative path arguments are joined to (the
	// upstream's working directory).
	Cwd string
	// HideDenied drops from tools/list the tools no binding of the policy
	// names (every call of them would be denied with policy.no_gate_binding).
	HideDenied bool
	// Bound reports which tool ids the policy binds; needed by HideDenied.
	Bound func(ctx context.Context, toolIDs []string) (map[string]bool, error)
	Log   *slog.Logger
}

// Upstream is the server side of a relay: its stdin and stdout.
type Upstream struct {
	In  io.WriteCloser
	Out io.Reader
	// InputClosed, when set, is called once the client's input has ended
	// and the upstream's input was closed (the stdio runner then gives the
	// child a grace period to exit).
	InputClosed func()
}

// ErrUpstreamGone is the reason a call still waiting for the upstream is
// answered with an error when the upstream ends.
var ErrUpstreamGone = errors.New("mcp: upstream closed before answering")

// call is one tools/call in flight.
type call struct {
	id     json.RawMessage
	tool   string
	cancel context.CancelFunc
	// state is guarded by session.mu.
	permit    *controller.Permit
	forwarded bool
	cancelled bool
	done      bool
	started   time.Time
}

// session is the state of one relay run.
type session struct {
	p        *Proxy
	toClient *lineWriter
	toServer *lineWriter
	log      *slog.Logger

	mu       sync.Mutex
	calls    map[string]*call
	lists    map[string]bool
	inits    map[string]bool
	upstream string // serverInfo.name from initialize
	// initialized is closed once no initialize is in flight any more: a
	// tools/call sent before the answer (pipelining) waits for it, so the
	// upstream's mapping applies.
	initialized chan struct{}
	tools       map[string]*sdk.ToolAnnotations
	seen        map[string]bool // tools whose spec source was logged
	gone        bool            // upstream output ended

	authorizing sync.WaitGroup
}

// lineWriter writes whole lines under a lock: messages from several
// goroutines never interleave.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) write(line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	_, err := l.w.Write(buf)
	return err
}

// Relay runs the session until both directions end: the client's input at
// EOF closes the upstream's input; the upstream's output at EOF (it
// exited) ends the session. Calls the upstream never answered are answered
// with an error and recorded as failed. It does not close the session's
// task: the caller does, with Governor.Close, once the upstream has exited.
func (p *Proxy) Relay(ctx context.Context, clientIn io.Reader, clientOut io.Writer, up Upstream) error {
	log := p.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &session{
		p: p, toClient: &lineWriter{w: clientOut}, toServer: &lineWriter{w: up.In}, log: log,
		calls: map[string]*call{}, lists: map[string]bool{}, inits: map[string]bool{},
		tools: map[string]*sdk.ToolAnnotations{}, seen: map[string]bool{}, initialized: make(chan struct{}),
	}
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		s.readServer(ctx, up.Out)
	}()
	clientDone := make(chan struct{})
	go func() {
		defer close(clientDone)
		s.readClient(ctx, clientIn)
		s.authorizing.Wait()
		_ = up.In.Close()
		if up.InputClosed != nil {
			up.InputClosed()
		}
	}()
	select {
	case <-serverDone:
	case <-ctx.Done():
		_ = up.In.Close()
		<-serverDone
	}
	// The upstream is gone: stop held calls, then answer and record every
	// call it will never answer.
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
	s.markInitialized()
	s.mu.Lock()
	for _, c := range s.calls {
		if c.cancel != nil {
			c.cancel()
		}
	}
	s.mu.Unlock()
	s.authorizing.Wait()
	s.failPending(ctx)
	select {
	case <-clientDone:
	default:
		// The client may still be connected; its reader ends with the
		// process. Nothing it sends now reaches an upstream.
	}
	return ctx.Err()
}

func readLines(r io.Reader, fn func(line []byte)) {
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			fn(trimEOL(line))
		}
		if err != nil {
			return
		}
	}
}

// trimEOL drops the line's "\n" (and a "\r" before it): the rest is
// forwarded unchanged.
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

func blank(b []byte) bool { return len(strings.TrimSpace(string(b))) == 0 }

// readClient handles the client's messages in order. A tools/call is
// governed on its own goroutine (an approval may hold it); everything else
// is forwarded at once.
func (s *session) readClient(ctx context.Context, r io.Reader) {
	readLines(r, func(line []byte) {
		if blank(line) {
			return
		}
		msg, err := Parse(line)
		if err != nil {
			// JSON-RPC: invalid JSON gets a Parse error with a null id. It
			// is not forwarded: what the proxy cannot read it cannot govern.
			s.reply(errorResponse(nil, jsonrpc.CodeParseError, "Parse error"))
			return
		}
		switch msg.Kind {
		case KindInvalid:
			s.reply(errorResponse(msg.ID, jsonrpc.CodeInvalidRequest, "Invalid Request"))
		case KindBatch:
			s.clientBatch(line, msg)
		case KindRequest:
			s.clientRequest(ctx, line, msg)
		case KindNotification:
			if msg.Method == "notifications/cancelled" {
				if id, ok := cancelledRequest(msg.Params); ok && s.cancelCall(ctx, id) {
					return // the call never reached the upstream
				}
			}
			s.forward(line)
		default:
			s.forward(line) // a response to a server request (sampling, roots, elicitation)
		}
	})
}

func (s *session) forward(line []byte) {
	if err := s.toServer.write(line); err != nil {
		s.log.Warn("mcp: upstream input closed", "err", err)
	}
}

func (s *session) reply(line []byte) {
	if err := s.toClient.write(line); err != nil {
		s.log.Warn("mcp: client output closed", "err", err)
	}
}

// clientBatch forwards a batch unchanged unless it holds a message the
// proxy must govern (tools/call, or tools/list under HideDenied): then each
// request in it is refused with Invalid Request, since splitting it would
// mean re-encoding what the client sent. (Batches left MCP in 2025-06-18.)
func (s *session) clientBatch(line []byte, msg Message) {
	governed := false
	for _, m := range msg.Batch {
		if m.Kind == KindRequest && (m.Method == "tools/call" || (m.Method == "tools/list" && s.p.HideDenied) || m.Method == "initialize") {
			governed = true
		}
	}
	if !governed {
		s.mu.Lock()
		for _, m := range msg.Batch {
			if m.Kind == KindRequest && m.Method == "tools/list" {
				s.lists[idKey(m.ID)] = true
			}
		}
		s.mu.Unlock()
		s.forward(line)
		return
	}
	var out []json.RawMessage
	for _, m := range msg.Batch {
		if m.Kind == KindRequest || (m.Kind == KindInvalid && len(m.ID) > 0) {
			out = append(out, errorResponse(m.ID, jsonrpc.CodeInvalidRequest, "govhost: a batch may not carry tools/call, tools/list or initialize; send them alone"))
		}
	}
	if len(out) == 0 {
		return
	}
	b, _ := json.Marshal(out)
	s.reply(b)
}

func (s *session) clientRequest(ctx context.Context, line []byte, msg Message) {
	key := idKey(msg.ID)
	if msg.Method != "initialize" {
		s.markInitialized()
	}
	switch msg.Method {
	case "tools/call":
		s.mu.Lock()
		if _, dup := s.calls[key]; dup {
			s.mu.Unlock()
			s.reply(errorResponse(msg.ID, jsonrpc.CodeInvalidRequest, "govhost: request id already in use by a call in flight"))
			return
		}
		callCtx, cancel := context.WithCancel(ctx)
		c := &call{id: msg.ID, cancel: cancel}
		s.calls[key] = c
		gone := s.gone
		s.mu.Unlock()
		if gone {
			cancel()
		}
		s.authorizing.Add(1)
		go func() {
			defer s.authorizing.Done()
			defer cancel()
			s.govern(callCtx, c, line, msg)
		}()
		return
	case "tools/list":
		s.mu.Lock()
		s.lists[key] = true
		s.mu.Unlock()
	case "initialize":
		s.mu.Lock()
		s.inits[key] = true
		s.mu.Unlock()
	}

	s.forward(line)
}

// cancelCall handles notifications/cancelled for a tools/call: a call
// still being authorized (held for approval) is stopped and never
// forwarded; a forwarded call is recorded as failed ("cancelled") and the
// cancellation is forwarded. It reports whether the notification must be
// dropped.
func (s *session) cancelCall(ctx context.Context, id json.RawMessage) bool {
	s.mu.Lock()
	c, ok := s.calls[idKey(id)]
	if !ok || c.done {
		s.mu.Unlock()
		return false
	}
	c.cancelled = true
	if !c.forwarded {
		s.mu.Unlock()
		c.cancel()
		return true
	}
	c.done = true
	delete(s.calls, idKey(id))
	p := c.permit
	started := c.started
	s.mu.Unlock()
	s.complete(ctx, c.tool, *p, controller.Outcome{Failed: true, ErrorClass: "cancelled", Duration: time.Since(started)})
	return false
}

// govern authorizes one tools/call and forwards it, or answers it.
func (s *session) govern(ctx context.Context, c *call, line []byte, msg Message) {
	finish := func() {
		s.mu.Lock()
		c.done = true
		delete(s.calls, idKey(c.id))
		s.mu.Unlock()
	}
	params, err := callParams(msg.Params)
	if err != nil {
		finish()
		s.reply(errorResponse(c.id, jsonrpc.CodeInvalidParams, "govhost: invalid tools/call params: "+err.Error()))
		return
	}
	c.tool = params.Name
	select {
	case <-s.initialized:
	case <-ctx.Done():
	}
	args := params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	parsed, err := controller.ParseArguments(args)
	if err != nil {
		finish()
		s.reply(errorResponse(c.id, jsonrpc.CodeInvalidParams, "govhost: tools/call arguments must be a JSON object"))
		return
	}
	s.mu.Lock()
	ann := s.tools[params.Name]
	upstream := s.upstream
	spec, source := s.p.Mapper.Spec(upstream, params.Name, ann)
	if !s.seen[params.Name] {
		s.seen[params.Name] = true
		s.log.Info("mcp: tool mapping", "tool", params.Name, "source", string(source), "operation", spec.Operation, "paths", spec.Paths)
	}
	s.mu.Unlock()
	toolID := ToolID(s.p.Name, params.Name)
	if spec.AbsolutePaths {
		if rel, ok := spec.relativePath(parsed.Value); ok {
			finish()
			s.replyResult(c.id, deniedResult("govhost: path "+rel+" is relative; "+toolID+" resolves relative paths against its own directories, so the policy cannot judge it: give an absolute path"))
			return
		}
	}
	gc := controller.Call{
		Tool: toolID, Operation: spec.Operation, Arguments: args, Cwd: s.p.Cwd, PathArgs: spec.Paths,
		ToolCallID: string(c.id), Metadata: map[string]string{"mcp_server": s.p.Name, "mcp_tool": params.Name},
	}
	permit, err := s.p.Governor.Authorize(ctx, gc)
	if err != nil {
		finish()
		var denied *governance.GovernanceDeniedError
		switch {
		case ctx.Err() != nil && s.wasCancelled(c):
			// MCP cancellation: the receiver does not answer a cancelled request.
			s.log.Info("mcp: held call cancelled by the client", "tool", toolID)
		case errors.As(err, &denied):
			s.log.Info("mcp: denied", "tool", toolID, "reason", denied.ReasonCode, "gate", denied.GateID)
			s.replyResult(c.id, deniedResult(denialText(denied)))
		default:
			s.log.Warn("mcp: call not governed, not forwarded", "tool", toolID, "err", err)
			s.replyResult(c.id, deniedResult("govhost: the call could not be governed and was not forwarded: "+err.Error()))
		}
		return
	}
	out := line
	if permit.ArgumentDigest != parsed.Digest {
		// A transform gate or an approver replaced the arguments: the
		// upstream must run the final ones, so this one request is rebuilt.
		if out, err = withArguments(msg, permit.Arguments); err != nil {
			finish()
			s.complete(ctx, toolID, permit, controller.Outcome{Failed: true, ErrorClass: "proxy_error"})
			s.reply(errorResponse(c.id, jsonrpc.CodeInternalError, "govhost: could not rebuild the request"))
			return
		}
	}
	s.mu.Lock()
	if c.cancelled || s.gone {
		class := "cancelled"
		if s.gone {
			class = "upstream_exited"
		}
		c.done = true
		delete(s.calls, idKey(c.id))
		s.mu.Unlock()
		s.complete(context.WithoutCancel(ctx), toolID, permit, controller.Outcome{Failed: true, ErrorClass: class})
		if class != "cancelled" {
			s.reply(errorResponse(c.id, jsonrpc.CodeInternalError, ErrUpstreamGone.Error()))
		}
		return
	}
	c.permit, c.forwarded, c.started, c.tool = &permit, true, time.Now(), toolID
	s.mu.Unlock()
	s.forward(out)
}

func (s *session) wasCancelled(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.cancelled
}

func (s *session) replyResult(id json.RawMessage, r *sdk.CallToolResult) {
	b, err := resultResponse(id, r)
	if err != nil {
		s.reply(errorResponse(id, jsonrpc.CodeInternalError, "govhost: "+err.Error()))
		return
	}
	s.reply(b)
}

// denialText is what the model reads: the gate's model-facing message, or
// the reason code when the gate gave none.
func denialText(d *governance.GovernanceDeniedError) string {
	if d.Message != "" {
		return d.Message
	}
	return "permission denied by govhost: " + d.ReasonCode
}

// withArguments rebuilds a tools/call request with the final arguments,
// keeping every other member of params as it was.
func withArguments(msg Message, args json.RawMessage) ([]byte, error) {
	var params map[string]json.RawMessage
	if err := json.Unmarshal(msg.Params, &params); err != nil {
		return nil, err
	}
	params["arguments"] = args
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", msg.ID, msg.Method, p})
}

// readServer handles the upstream's messages: responses to governed calls
// complete their permits; everything valid is forwarded unchanged; what is
// not a JSON-RPC message is dropped (stdout carries only MCP messages).
func (s *session) readServer(ctx context.Context, r io.Reader) {
	readLines(r, func(line []byte) {
		if blank(line) {
			return
		}
		msg, err := Parse(line)
		if err != nil {
			s.log.Warn("mcp: dropped a line from the upstream that is not JSON", "bytes", len(line))
			return
		}
		switch msg.Kind {
		case KindResponse:
			if out, ok := s.serverResponse(ctx, line, msg); ok {
				s.reply(out)
			}
		case KindBatch:
			for _, m := range msg.Batch {
				if m.Kind == KindResponse {
					s.track(ctx, m)
				}
			}
			s.reply(line)
		case KindInvalid:
			s.log.Warn("mcp: dropped an invalid JSON-RPC message from the upstream", "bytes", len(line))
			if len(msg.ID) > 0 {
				s.failCall(ctx, msg.ID, "invalid_response", "govhost: the upstream answered with an invalid JSON-RPC message")
			}
		default:
			s.reply(line) // the server's own requests and notifications
		}
	})
}

// serverResponse tracks one response and returns the line to forward.
func (s *session) serverResponse(ctx context.Context, line []byte, msg Message) ([]byte, bool) {
	if s.p.HideDenied {
		s.mu.Lock()
		isList := s.lists[idKey(msg.ID)]
		s.mu.Unlock()
		if isList && msg.Result != nil {
			s.track(ctx, msg)
			return s.hideDenied(ctx, msg, line), true
		}
	}
	s.track(ctx, msg)
	return line, true
}

// track reads what the proxy needs from a response: the outcome of a
// governed call, the tools and their annotations from tools/list, the
// upstream's name from initialize.
func (s *session) track(ctx context.Context, msg Message) {
	key := idKey(msg.ID)
	s.mu.Lock()
	if c, ok := s.calls[key]; ok && c.forwarded && !c.done {
		c.done = true
		delete(s.calls, key)
		p, started := *c.permit, c.started
		s.mu.Unlock()
		out := controller.Outcome{Duration: time.Since(started)}
		switch {
		case msg.Error != nil:
			out.Failed, out.ErrorClass = true, "rpc_error"
		case toolResultIsError(msg.Result):
			out.Failed, out.ErrorClass = true, "tool_error"
		}
		if msg.Result != nil {
			out.ResultDigest = governance.SHA256Hex(msg.Result)
		}
		s.complete(ctx, c.tool, p, out)
		return
	}
	if s.lists[key] {
		delete(s.lists, key)
		var r sdk.ListToolsResult
		if msg.Result != nil && json.Unmarshal(msg.Result, &r) == nil {
			for _, t := range r.Tools {
				if t != nil {
					s.tools[t.Name] = t.Annotations
				}
			}
		}
	}
	initDone := false
	if s.inits[key] {
		delete(s.inits, key)
		var r sdk.InitializeResult
		if msg.Result != nil && json.Unmarshal(msg.Result, &r) == nil && r.ServerInfo != nil {
			s.upstream = r.ServerInfo.Name
			s.log.Info("mcp: upstream", "name", r.ServerInfo.Name, "version", r.ServerInfo.Version)
		}
		initDone = len(s.inits) == 0
	}
	s.mu.Unlock()
	if initDone {
		s.markInitialized()
	}
}

// markInitialized ends the wait of calls pipelined behind initialize.
func (s *session) markInitialized() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.inits) > 0 && !s.gone {
		return
	}
	select {
	case <-s.initialized:
	default:
		close(s.initialized)
	}
}

// hideDenied rewrites a tools/list result without the tools the policy
// never binds. The result is re-encoded from its raw members so nothing
// else changes meaning.
func (s *session) hideDenied(ctx context.Context, msg Message, line []byte) []byte {
	var result map[string]json.RawMessage
	if json.Unmarshal(msg.Result, &result) != nil {
		return line
	}
	var tools []json.RawMessage
	if json.Unmarshal(result["tools"], &tools) != nil {
		return line
	}
	names := make([]string, len(tools))
	ids := make([]string, len(tools))
	for i, t := range tools {
		var head struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(t, &head)
		names[i], ids[i] = head.Name, ToolID(s.p.Name, head.Name)
	}
	if s.p.Bound == nil {
		return line
	}
	bound, err := s.p.Bound(ctx, ids)
	if err != nil {
		s.log.Warn("mcp: --hide-denied: policy not readable; tools/list left whole", "err", err)
		return line
	}
	kept := make([]json.RawMessage, 0, len(tools))
	for i, t := range tools {
		if bound[ids[i]] {
			kept = append(kept, t)
		} else {
			s.log.Info("mcp: hidden from tools/list (no binding)", "tool", names[i])
		}
	}
	if len(kept) == len(tools) {
		return line
	}
	result["tools"], _ = json.Marshal(kept)
	out, err := resultResponse(msg.ID, result)
	if err != nil {
		return line
	}
	return out
}

// failCall answers a forwarded call the upstream will not answer properly
// and records it failed.
func (s *session) failCall(ctx context.Context, id json.RawMessage, class, text string) {
	key := idKey(id)
	s.mu.Lock()
	c, ok := s.calls[key]
	if !ok || !c.forwarded || c.done {
		s.mu.Unlock()
		return
	}
	c.done = true
	delete(s.calls, key)
	p, started := *c.permit, c.started
	s.mu.Unlock()
	s.complete(ctx, c.tool, p, controller.Outcome{Failed: true, ErrorClass: class, Duration: time.Since(started)})
	s.reply(errorResponse(c.id, jsonrpc.CodeInternalError, text))
}

// failPending answers and records every forwarded call left when the
// upstream ended.
func (s *session) failPending(ctx context.Context) {
	s.mu.Lock()
	var ids []json.RawMessage
	for _, c := range s.calls {
		if c.forwarded && !c.done {
			ids = append(ids, c.id)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.failCall(ctx, id, "upstream_exited", "govhost: "+ErrUpstreamGone.Error())
	}
}

func (s *session) complete(ctx context.Context, tool string, p controller.Permit, out controller.Outcome) {
	if err := s.p.Governor.Complete(context.WithoutCancel(ctx), p, out); err != nil {
		s.log.Error("mcp: outcome not recorded", "tool", tool, "permit", p.ID, "err", err)
	}
}
