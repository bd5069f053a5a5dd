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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// session is the state of one stdio relay run.
type session struct {
	*governed
	toClient *lineWriter
	toServer *lineWriter

	// lists and inits are guarded by governed.mu.
	lists map[string]bool
	inits map[string]bool
	// initialized is closed once no initialize is in flight any more: a
	// tools/call sent before the answer (pipelining) waits for it, so the
	// upstream's mapping applies.
	initialized chan struct{}

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
		governed: newGoverned(p, p.Governor, log, nil),
		toClient: &lineWriter{w: clientOut}, toServer: &lineWriter{w: up.In},
		lists: map[string]bool{}, inits: map[string]bool{}, initialized: make(chan struct{}),
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
	s.end()
	s.markInitialized()
	s.authorizing.Wait()
	for _, id := range s.end() {
		if s.failCall(ctx, id, "upstream_exited") {
			s.reply(errorResponse(id, jsonrpc.CodeInternalError, "govhost: "+ErrUpstreamGone.Error()))
		}
	}
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
		c, callCtx, err := s.begin(ctx, msg.ID)
		if err != nil {
			s.reply(errorResponse(msg.ID, jsonrpc.CodeInvalidRequest, err.Error()))
			return
		}
		s.authorizing.Add(1)
		go func() {
			defer s.authorizing.Done()
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

// govern authorizes one tools/call (after any initialize it was
// pipelined behind) and forwards it, or answers it.
func (s *session) govern(ctx context.Context, c *call, line []byte, msg Message) {
	select {
	case <-s.initialized:
	case <-ctx.Done():
	}
	v := s.decide(ctx, c, line, msg)
	switch {
	case v.forward != nil:
		s.forward(v.forward)
	case v.reply != nil:
		s.reply(v.reply)
	}
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
				if s.failCall(ctx, msg.ID, "invalid_response") {
					s.reply(errorResponse(msg.ID, jsonrpc.CodeInternalError, "govhost: the upstream answered with an invalid JSON-RPC message"))
				}
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
	if s.answered(ctx, msg) {
		return
	}
	key := idKey(msg.ID)
	s.mu.Lock()
	isList, isInit := s.lists[key], s.inits[key]
	delete(s.lists, key)
	delete(s.inits, key)
	initDone := isInit && len(s.inits) == 0
	s.mu.Unlock()
	if isList {
		s.learnTools(msg.Result)
	}
	if isInit {
		s.learnServer(msg.Result)
	}
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
