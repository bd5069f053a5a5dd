package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// governed is what one MCP session keeps for its governed calls, whatever
// the transport: the calls in flight, the upstream's name and its tools'
// annotations (for the mapping). Both the stdio relay and the HTTP
// intermediary decide, forward, cancel and complete tools/call through it,
// so a call is governed the same way over either.
type governed struct {
	p   *Proxy
	gov Governor
	log *slog.Logger

	book *toolBook

	mu    sync.Mutex
	calls map[string]*call
	gone  bool // the upstream ended: nothing more is forwarded
}

// toolBook is what the proxy learned about the upstream: its name and its
// tools. The HTTP intermediary shares one across its sessions (one
// upstream), so a session that comes back after being closed, or that
// calls before it lists, still maps the tools another session listed.
type toolBook struct {
	mu       sync.Mutex
	upstream string // serverInfo.name from initialize
	tools    map[string]*sdk.ToolAnnotations
	// headers are the tools' x-mcp-header declarations (paramHeaders).
	headers map[string]map[string][]string
	seen    map[string]bool // tools whose spec source was logged
}

func newToolBook() *toolBook {
	return &toolBook{tools: map[string]*sdk.ToolAnnotations{}, headers: map[string]map[string][]string{}, seen: map[string]bool{}}
}

// newGoverned starts a session's state; book nil gives it its own.
func newGoverned(p *Proxy, gov Governor, log *slog.Logger, book *toolBook) *governed {
	if book == nil {
		book = newToolBook()
	}
	return &governed{p: p, gov: gov, log: log, book: book, calls: map[string]*call{}}
}

// call is one tools/call in flight.
type call struct {
	id     json.RawMessage
	tool   string
	cancel context.CancelFunc
	// state is guarded by governed.mu.
	permit    *controller.Permit
	forwarded bool
	cancelled bool
	done      bool
	started   time.Time
}

// errDuplicateID refuses a tools/call whose id is already in flight.
var errDuplicateID = errors.New("govhost: request id already in use by a call in flight")

// begin registers a tools/call; its context ends when the call is
// cancelled or the session ends.
func (g *governed) begin(ctx context.Context, id json.RawMessage) (*call, context.Context, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := idKey(id)
	if _, dup := g.calls[key]; dup {
		return nil, nil, errDuplicateID
	}
	callCtx, cancel := context.WithCancel(ctx)
	c := &call{id: id, cancel: cancel}
	g.calls[key] = c
	if g.gone {
		cancel()
	}
	return c, callCtx, nil
}

// finish forgets a call that ends without a permit to complete.
func (g *governed) finish(c *call) {
	g.mu.Lock()
	c.done = true
	delete(g.calls, idKey(c.id))
	g.mu.Unlock()
	c.cancel()
}

// verdict is what decide made of one tools/call: forward these bytes (the
// call is permitted and marked forwarded), or answer the client with
// reply, or nothing at all (the client cancelled it).
type verdict struct {
	forward []byte
	reply   []byte
}

// decide authorizes one tools/call. A denial, a refusal and a call that
// could not be governed are answered (reply) and never forwarded; an
// allowed call's request is returned to forward, rebuilt only when a gate
// or an approver replaced its arguments.
func (g *governed) decide(ctx context.Context, c *call, line []byte, msg Message) verdict {
	answer := func(b []byte) verdict { g.finish(c); return verdict{reply: b} }
	params, err := callParams(msg.Params)
	if err != nil {
		return answer(errorResponse(c.id, jsonrpc.CodeInvalidParams, "govhost: invalid tools/call params: "+err.Error()))
	}
	c.tool = params.Name
	args := params.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	parsed, err := governance.ParseArguments(args)
	if err != nil {
		return answer(errorResponse(c.id, jsonrpc.CodeInvalidParams, "govhost: tools/call arguments must be a JSON object"))
	}
	b := g.book
	b.mu.Lock()
	spec, source := g.p.Mapper.Spec(b.upstream, params.Name, b.tools[params.Name])
	if !b.seen[params.Name] {
		b.seen[params.Name] = true
		g.log.Info("mcp: tool mapping", "tool", params.Name, "source", string(source), "operation", spec.Operation, "paths", spec.Paths)
	}
	b.mu.Unlock()
	toolID := ToolID(g.p.Name, params.Name)
	if spec.AbsolutePaths {
		if rel, ok := spec.relativePath(parsed.Value); ok {
			return answer(g.result(c.id, deniedResult("govhost: path "+rel+" is relative; "+toolID+" resolves relative paths against its own directories, so the policy cannot judge it: give an absolute path")))
		}
	}
	gc := controller.Call{
		Tool: toolID, Operation: spec.Operation, Arguments: args, Parsed: &parsed, Cwd: g.p.Cwd, PathArgs: spec.Paths,
		ToolCallID: string(c.id), Metadata: map[string]string{"mcp_server": g.p.Name, "mcp_tool": params.Name},
	}
	permit, err := g.gov.Authorize(ctx, gc)
	if err != nil {
		var denied *governance.GovernanceDeniedError
		switch {
		case ctx.Err() != nil && g.wasCancelled(c):
			// MCP cancellation: the receiver does not answer a cancelled request.
			g.finish(c)
			g.log.Info("mcp: held call cancelled by the client", "tool", toolID)
			return verdict{}
		case errors.As(err, &denied):
			g.log.Info("mcp: denied", "tool", toolID, "reason", denied.ReasonCode, "gate", denied.GateID)
			return answer(g.result(c.id, deniedResult(denialText(denied))))
		default:
			g.log.Warn("mcp: call not governed, not forwarded", "tool", toolID, "err", err)
			return answer(g.result(c.id, deniedResult("govhost: the call could not be governed and was not forwarded: "+err.Error())))
		}
	}
	out := line
	if permit.ArgumentDigest != parsed.Digest {
		// A transform gate or an approver replaced the arguments: the
		// upstream must run the final ones, so this one request is rebuilt.
		if out, err = withArguments(msg, permit.Arguments); err != nil {
			g.complete(ctx, toolID, permit, controller.Outcome{Failed: true, ErrorClass: "proxy_error"})
			return answer(errorResponse(c.id, jsonrpc.CodeInternalError, "govhost: could not rebuild the request"))
		}
	}
	g.mu.Lock()
	if c.cancelled || g.gone {
		class := "cancelled"
		if g.gone {
			class = "upstream_exited"
		}
		c.done = true
		delete(g.calls, idKey(c.id))
		g.mu.Unlock()
		g.complete(ctx, toolID, permit, controller.Outcome{Failed: true, ErrorClass: class})
		if class == "cancelled" {
			return verdict{}
		}
		return verdict{reply: errorResponse(c.id, jsonrpc.CodeInternalError, ErrUpstreamGone.Error())}
	}
	c.permit, c.forwarded, c.started, c.tool = &permit, true, time.Now(), toolID
	g.mu.Unlock()
	return verdict{forward: out}
}

func (g *governed) wasCancelled(c *call) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return c.cancelled
}

func (g *governed) result(id json.RawMessage, r *sdk.CallToolResult) []byte {
	b, err := resultResponse(id, r)
	if err != nil {
		return errorResponse(id, jsonrpc.CodeInternalError, "govhost: "+err.Error())
	}
	return b
}

// cancelCall handles notifications/cancelled for a tools/call: a call
// still being authorized (held for approval) is stopped and never
// forwarded; a forwarded call is recorded as failed ("cancelled") and the
// cancellation is forwarded. It reports whether the notification must be
// dropped.
func (g *governed) cancelCall(ctx context.Context, id json.RawMessage) bool {
	g.mu.Lock()
	c, ok := g.calls[idKey(id)]
	if !ok || c.done {
		g.mu.Unlock()
		return false
	}
	c.cancelled = true
	if !c.forwarded {
		g.mu.Unlock()
		c.cancel()
		return true
	}
	c.done = true
	delete(g.calls, idKey(id))
	p, started := *c.permit, c.started
	g.mu.Unlock()
	g.complete(ctx, c.tool, p, controller.Outcome{Failed: true, ErrorClass: "cancelled", Duration: time.Since(started)})
	return false
}

// answered completes the permit of the forwarded call a response answers
// (result digest; isError or a JSON-RPC error as failed). It reports
// whether the response was one.
func (g *governed) answered(ctx context.Context, msg Message) bool {
	c, p, ok := g.takeForwarded(msg.ID)
	if !ok {
		return false
	}
	out := controller.Outcome{Duration: time.Since(c.started)}
	switch {
	case msg.Error != nil:
		out.Failed, out.ErrorClass = true, "rpc_error"
	case toolResultIsError(msg.Result):
		out.Failed, out.ErrorClass = true, "tool_error"
	}
	if msg.Result != nil {
		out.ResultDigest = governance.SHA256Hex(msg.Result)
	}
	g.complete(ctx, c.tool, p, out)
	return true
}

// failCall records a forwarded call the upstream will not answer properly
// as failed with class. It reports whether there was such a call.
func (g *governed) failCall(ctx context.Context, id json.RawMessage, class string) bool {
	c, p, ok := g.takeForwarded(id)
	if !ok {
		return false
	}
	g.complete(ctx, c.tool, p, controller.Outcome{Failed: true, ErrorClass: class, Duration: time.Since(c.started)})
	return true
}

// takeForwarded removes the forwarded, not yet completed call with id and
// returns it with its permit: exactly one of its answer, its failure or its
// cancellation completes it.
func (g *governed) takeForwarded(id json.RawMessage) (*call, controller.Permit, bool) {
	key := idKey(id)
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.calls[key]
	if !ok || !c.forwarded || c.done {
		return nil, controller.Permit{}, false
	}
	c.done = true
	delete(g.calls, key)
	return c, *c.permit, true
}

// end marks the upstream gone, stops every held call and returns the ids
// of the forwarded calls still waiting for an answer.
func (g *governed) end() []json.RawMessage {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gone = true
	var ids []json.RawMessage
	for _, c := range g.calls {
		if c.cancel != nil {
			c.cancel()
		}
		if c.forwarded && !c.done {
			ids = append(ids, c.id)
		}
	}
	return ids
}

func (g *governed) complete(ctx context.Context, tool string, p controller.Permit, out controller.Outcome) {
	if err := g.gov.Complete(context.WithoutCancel(ctx), p, out); err != nil {
		g.log.Error("mcp: outcome not recorded", "tool", tool, "permit", p.ID, "err", err)
	}
}

// learnTools keeps the tools' annotations from a tools/list result.
func (g *governed) learnTools(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name        string               `json:"name"`
			Annotations *sdk.ToolAnnotations `json:"annotations"`
			InputSchema json.RawMessage      `json:"inputSchema"`
		} `json:"tools"`
	}
	if result == nil || json.Unmarshal(result, &r) != nil {
		return
	}
	b := g.book
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range r.Tools {
		b.tools[t.Name] = t.Annotations
		if h := paramHeaders(t.InputSchema); h != nil {
			b.headers[t.Name] = h
		} else {
			delete(b.headers, t.Name)
		}
	}
}

// declaredHeaders returns the x-mcp-header declarations of a tool.
func (g *governed) declaredHeaders(tool string) map[string][]string {
	g.book.mu.Lock()
	defer g.book.mu.Unlock()
	return g.book.headers[tool]
}

// learnServer keeps the upstream's name from an initialize result (the
// built-in mappings are chosen by it).
func (g *governed) learnServer(result json.RawMessage) {
	var r sdk.InitializeResult
	if result == nil || json.Unmarshal(result, &r) != nil || r.ServerInfo == nil {
		return
	}
	g.book.mu.Lock()
	g.book.upstream = r.ServerInfo.Name
	g.book.mu.Unlock()
	g.log.Info("mcp: upstream", "name", r.ServerInfo.Name, "version", r.ServerInfo.Version)
}

// toolBinder is a Governor that can say which tools its policy binds
// (the sidecar's, through a dry run): HideDenied uses it when the Proxy
// has no Bound of its own.
type toolBinder interface {
	Bound(ctx context.Context, toolIDs []string) (map[string]bool, error)
}

// hideDenied rewrites a tools/list response without the tools the policy
// never binds. The result is re-encoded from its raw members so nothing
// else changes meaning; when nothing is hidden the bytes are unchanged.
func (g *governed) hideDenied(ctx context.Context, msg Message, line []byte) []byte {
	boundOf := g.p.Bound
	if b, ok := g.gov.(toolBinder); ok && boundOf == nil {
		boundOf = b.Bound
	}
	if boundOf == nil || msg.Result == nil {
		return line
	}
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
		names[i], ids[i] = head.Name, ToolID(g.p.Name, head.Name)
	}
	bound, err := boundOf(ctx, ids)
	if err != nil {
		g.log.Warn("mcp: --hide-denied: policy not readable; tools/list left whole", "err", err)
		return line
	}
	kept := make([]json.RawMessage, 0, len(tools))
	for i, t := range tools {
		if bound[ids[i]] {
			kept = append(kept, t)
		} else {
			g.log.Info("mcp: hidden from tools/list (no binding)", "tool", names[i])
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
