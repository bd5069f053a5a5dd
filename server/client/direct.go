package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// direct is the client's own HTTP/1.1 transport, used when the server is
// reached in plain HTTP without a proxy (the default install: `govhost
// serve` on loopback) and the caller did not give an http.Client. A
// governed call is two requests (authorize, complete) from a caller that
// waits for each answer: one connection at a time does one exchange,
// written in one write and read by the calling goroutine. net/http's
// Transport costs three goroutines a request (the caller, a connection's
// read and write loops) with the hand-offs between them, a request and a
// response with their header maps, and a context a request: about 45
// allocations a request and as many scheduler wake-ups, the better part
// of a round trip's cost over loopback (docs/performance.md, "Fourth
// pass"). What it does not need from net/http: TLS (https goes through
// net/http), proxies (a base URL net/http would proxy goes through
// net/http), HTTP/2, redirects (the API sends none), compression (the
// server never compresses).
//
// Connections are kept for reuse (up to MaxIdleConnsPerHost), most
// recently used first. Each is checked before reuse with one
// non-blocking peek (a server closes idle connections after its
// IdleTimeout, and all of them when it stops or restarts: net/http's
// read loop notices at once, this check when the connection is next
// taken), and one idle for longer than maxIdleAge is closed. A request is sent again on a new connection only when nothing
// of it was written, or when it is a GET; a POST whose connection breaks
// after it was written is ErrUnreachable, as net/http does (the server
// may have acted on it).
type direct struct {
	addr   string // host:port dialled
	host   string // the Host header
	prefix string // the base URL's path, before every route's
	auth   string // the Authorization header's value, or ""
	dialer net.Dialer

	mu   sync.Mutex
	idle []*conn // most recently used last
}

// maxIdleAge is how long a connection may stay idle before it is closed
// instead of reused (http.DefaultTransport's IdleConnTimeout; the
// server's own IdleTimeout is 2 min).
const maxIdleAge = 90 * time.Second

// maxAnswerHead bounds an answer's status line and headers.
const maxAnswerHead = 1 << 20

// newDirect returns the direct transport for base, or nil when base needs
// something only net/http does (https, a proxy from the environment, user
// information, a query) or token cannot be sent as a header value.
func newDirect(base *url.URL, token string) *direct {
	if base.Scheme != "http" || base.User != nil || base.RawQuery != "" || base.Fragment != "" || base.Opaque != "" {
		return nil
	}
	if proxy, err := http.ProxyFromEnvironment(&http.Request{URL: base}); err != nil || proxy != nil {
		return nil
	}
	if !validHeaderValue(token) || !validTarget(base.EscapedPath()) {
		return nil
	}
	port := base.Port()
	if port == "" {
		port = "80"
	}
	d := &direct{
		addr:   net.JoinHostPort(base.Hostname(), port),
		host:   base.Host,
		prefix: trimSlashes(base.EscapedPath()),
		// http.DefaultTransport's dialer.
		dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
	}
	if token != "" {
		d.auth = "Bearer " + token
	}
	return d
}

func trimSlashes(p string) string {
	for len(p) > 0 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p
}

// validHeaderValue reports whether v may be sent as a header value as it
// is (no control character: a token with a line break would add headers).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// validTarget reports whether p may be sent as a request target as it is
// (printable ASCII without spaces: the routes' paths are escaped).
func validTarget(p string) bool {
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// errStale is a reused connection the server had closed before anything
// of the request was written to it (retried on a new one).
var errStale = errors.New("connection closed by the server while idle")

// exchange sends one request and reads the answer's status and headers:
// the connection returned is the answer's body (read it, then Close it).
// body is sent with contentType ("" sends none: a GET).
func (d *direct) exchange(ctx context.Context, timeout time.Duration, method, path, contentType string, body []byte) (*conn, error) {
	if !validTarget(path) {
		return nil, fmt.Errorf("request path %q: not a valid request target", path)
	}
	head := heads.Get().(*requestHead)
	defer heads.Put(head)
	// NB: a small body goes out with its head in one write; a large one (a
	// gate module) is not copied, and waits for the server's go-ahead: a
	// busy server refuses an upload before it reads the body.
	inline := len(body) <= maxInlineBody
	head.b = d.appendHead(head.b[:0], method, path, contentType, len(body), !inline)
	if inline {
		head.b = append(head.b, body...)
	}
	for attempt := 0; ; attempt++ {
		c, err := d.get(ctx)
		if err != nil {
			return nil, err
		}
		c.begin(ctx, timeout)
		headSent, refused, err := c.send(head.b, body, inline)
		if refused {
			// Answered before the body was sent: the server closes the
			// connection after its answer.
			c.keep = false
			return c, nil
		}
		switch {
		case err == nil:
			err = c.readHead(false)
		case headSent:
			// A server may answer before it read the whole body (a
			// refusal: too large, unauthorized, busy) and close the
			// connection: its answer is the outcome, as with net/http.
			if c.readHead(false) == nil {
				c.keep = false
				return c, nil
			}
		}
		if err == nil {
			return c, nil
		}
		why := c.explain(err)
		c.fail()
		// A reused connection that broke before the server answered: the
		// others kept as long are likely broken too (a restart).
		if c.reused && !c.answered {
			d.closeIdle()
		}
		if attempt == 0 && c.reused && !c.answered && (errors.Is(err, errStale) || method == http.MethodGet) && ctx.Err() == nil {
			continue
		}
		return nil, why
	}
}

// maxInlineBody is the largest body copied behind its head (one write);
// a larger one (a gate module) asks "Expect: 100-continue" and is sent on
// the server's go-ahead, through either transport.
const maxInlineBody = 64 << 10

// requestHead is a request's head (and small body) being written.
type requestHead struct{ b []byte }

var heads = sync.Pool{New: func() any { return &requestHead{b: make([]byte, 0, 1024)} }}

func (d *direct) appendHead(b []byte, method, path, contentType string, n int, expect bool) []byte {
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, d.prefix...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, d.host...)
	if d.auth != "" {
		b = append(b, "\r\nAuthorization: "...)
		b = append(b, d.auth...)
	}
	if contentType != "" {
		b = append(b, "\r\nContent-Type: "...)
		b = append(b, contentType...)
	}
	if contentType != "" || method != http.MethodGet {
		b = append(b, "\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	if expect {
		b = append(b, "\r\nExpect: 100-continue"...)
	}
	return append(b, "\r\n\r\n"...)
}

// get returns an idle connection that is still open, or a new one.
func (d *direct) get(ctx context.Context) (*conn, error) {
	now := time.Now()
	for {
		d.mu.Lock()
		n := len(d.idle)
		if n == 0 {
			d.mu.Unlock()
			break
		}
		c := d.idle[n-1]
		d.idle[n-1] = nil
		d.idle = d.idle[:n-1]
		d.mu.Unlock()
		if !now.Before(c.deadline) {
			// The last exchange's deadline (a caller's context's) passed
			// while idle: the check below would fail on it, not on the
			// connection.
			_ = c.nc.SetDeadline(time.Time{})
			c.armed = time.Time{}
		}
		if now.Sub(c.lastUsed) >= maxIdleAge || !c.open() {
			_ = c.nc.Close()
			continue
		}
		c.reused = true
		return c, nil
	}
	nc, err := d.dialer.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, err
	}
	c := &conn{d: d, nc: nc, br: bufio.NewReaderSize(nc, 4096)}
	if sc, ok := nc.(syscall.Conn); ok {
		c.raw, _ = sc.SyscallConn()
	}
	c.interrupt = c.interruptNow
	c.bindPeek()
	return c, nil
}

// put keeps c for reuse, or closes it when enough are kept.
func (d *direct) put(c *conn) {
	c.ctx, c.stop = nil, nil
	c.lastUsed = time.Now()
	d.mu.Lock()
	if len(d.idle) < MaxIdleConnsPerHost {
		d.idle = append(d.idle, c)
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	_ = c.nc.Close()
}

// closeIdle closes every idle connection.
func (d *direct) closeIdle() {
	d.mu.Lock()
	idle := d.idle
	d.idle = nil
	d.mu.Unlock()
	for _, c := range idle {
		_ = c.nc.Close()
	}
}

// conn is one kept-alive connection and, while in use, the answer being
// read from it: it is that answer's body (io.ReadCloser).
type conn struct {
	d        *direct
	nc       net.Conn
	raw      syscall.RawConn // for the idle check (nil: not checked)
	peek     peek            // the idle check's state and function
	br       *bufio.Reader
	lastUsed time.Time
	reused   bool
	armed    time.Time // the deadline set for the client's own timeout (zero: other)
	deadline time.Time // the deadline set for the exchange

	// The exchange in progress.
	ctx       context.Context
	stop      func() bool // stops the context's interrupt (nil: none)
	interrupt func()      // interruptNow, bound once
	answered  bool        // a byte of the answer arrived
	status    int
	keep      bool  // the connection may be reused after this answer
	remaining int64 // bytes of the body left (sized bodies)
	chunked   io.Reader
	toEOF     bool // the body ends when the server closes
	done      bool // the body was read to its end
	err       error
}

// begin starts an exchange on c: the deadline is the earlier of the
// context's and timeout from now; a context that can end interrupts the
// connection when it does.
func (c *conn) begin(ctx context.Context, timeout time.Duration) {
	c.ctx, c.answered, c.err = ctx, false, nil
	now := time.Now()
	deadline, exact := now.Add(timeout), false
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline, exact = d, true
	}
	// NB: the client's own timeout is armed with a slack of timeout/64 (2
	// s of 2 min) and kept while it is within it, instead of being armed
	// again for every request (two timers moved each time); a context's
	// deadline is armed as it is.
	switch {
	case exact:
		c.armed = time.Time{}
		_ = c.nc.SetDeadline(deadline)
	case c.armed.Before(deadline) || c.armed.After(deadline.Add(timeout/64)):
		c.armed = deadline.Add(timeout / 64)
		_ = c.nc.SetDeadline(c.armed)
	}
	c.deadline = c.armed
	if exact {
		c.deadline = deadline
	}
	c.stop = nil
	if ctx.Done() != nil {
		c.stop = context.AfterFunc(ctx, c.interrupt)
	}
}

// interruptNow ends the exchange in progress: its reads and writes fail.
func (c *conn) interruptNow() { _ = c.nc.SetDeadline(time.Unix(1, 0)) }

// send writes the request: head (with the body when inline), then body
// once the server said to go ahead (the head asked "Expect:
// 100-continue"). headSent reports the head written whole before the body
// failed; refused, that the server answered before the body was sent (its
// answer's head is read).
func (c *conn) send(head, body []byte, inline bool) (headSent, refused bool, err error) {
	n, err := c.nc.Write(head)
	if err == nil && !inline {
		headSent = true
		var proceed bool
		if proceed, err = c.awaitContinue(); err == nil && !proceed {
			return true, true, nil
		}
		if err == nil {
			_, err = c.nc.Write(body)
		}
	}
	if err != nil && n == 0 && c.reused {
		return false, false, fmt.Errorf("%w: %v", errStale, err)
	}
	return headSent, false, err
}

// expectContinueWait is how long a large body waits for the server's
// "100 Continue" before it is sent anyway (http.DefaultTransport's
// ExpectContinueTimeout): a server that ignores the expectation reads the
// body all the same.
const expectContinueWait = time.Second

// awaitContinue waits for the server's answer to "Expect: 100-continue":
// proceed when it is "100 Continue" or none came within
// expectContinueWait; else the answer is final (its head read).
func (c *conn) awaitContinue() (proceed bool, err error) {
	wait := time.Now().Add(expectContinueWait)
	if wait.Before(c.deadline) {
		_ = c.nc.SetReadDeadline(wait)
	}
	_, err = c.br.Peek(1)
	_ = c.nc.SetReadDeadline(c.deadline)
	// NB: the context may have ended (and interrupted the connection)
	// before the deadline was set back.
	if cerr := c.ctx.Err(); cerr != nil {
		return false, cerr
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(c.deadline) {
			return true, nil
		}
		return false, err
	}
	if err = c.readHead(true); err != nil {
		return false, err
	}
	return c.status == http.StatusContinue, nil
}

// readLine returns the next line of the answer's head, without its line
// end, valid until the next read.
func (c *conn) readLine(budget *int) ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if len(line) > 0 {
		c.answered = true
	}
	if err == bufio.ErrBufferFull {
		return nil, errors.New("malformed answer: a header line over 4096 bytes")
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if *budget -= len(line); *budget < 0 {
		return nil, fmt.Errorf("malformed answer: headers over %d bytes", maxAnswerHead)
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// readHead reads the answer's status line and headers, skipping
// informational answers (but for a 100 Continue when untilContinue), and
// sets up the reading of its body.
func (c *conn) readHead(untilContinue bool) error {
	budget := maxAnswerHead
	for {
		line, err := c.readLine(&budget)
		if err != nil {
			return err
		}
		// "HTTP/1.1 200 OK"
		if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
			return fmt.Errorf("malformed answer: status line %q", truncate(line))
		}
		status, err := strconv.Atoi(string(line[9:12]))
		if err != nil || status < 100 {
			return fmt.Errorf("malformed answer: status line %q", truncate(line))
		}
		c.status, c.keep = status, line[7] == '1'
		length, chunked := int64(-1), false
		for {
			line, err := c.readLine(&budget)
			if err != nil {
				return err
			}
			if len(line) == 0 {
				break
			}
			name, value, ok := bytes.Cut(line, []byte(":"))
			if !ok || len(name) == 0 || name[0] == ' ' || name[0] == '\t' {
				return fmt.Errorf("malformed answer: header line %q", truncate(line))
			}
			value = bytes.Trim(value, " \t")
			switch {
			case bytes.EqualFold(name, []byte("Content-Length")):
				n, err := strconv.ParseInt(string(value), 10, 64)
				if err != nil || n < 0 || (length >= 0 && n != length) {
					return fmt.Errorf("malformed answer: Content-Length %q", truncate(value))
				}
				length = n
			case bytes.EqualFold(name, []byte("Transfer-Encoding")):
				if !bytes.EqualFold(value, []byte("chunked")) {
					return fmt.Errorf("unsupported answer: Transfer-Encoding %q", truncate(value))
				}
				chunked = true
			case bytes.EqualFold(name, []byte("Connection")):
				if hasToken(value, "close") {
					c.keep = false
				}
			}
		}
		if status < 200 {
			if status == http.StatusSwitchingProtocols {
				return errors.New("unexpected answer: 101 Switching Protocols")
			}
			if status == http.StatusContinue && untilContinue {
				return nil
			}
			continue // 100 Continue, 103 Early Hints: the answer follows
		}
		c.remaining, c.chunked, c.toEOF, c.done = 0, nil, false, false
		switch {
		case status == http.StatusNoContent || status == http.StatusNotModified:
			c.done = true
		case chunked:
			// NB: a length beside chunked framing is ignored (RFC 9112
			// 6.3), and the connection not reused.
			c.chunked = httputil.NewChunkedReader(c.br)
			if length >= 0 {
				c.keep = false
			}
		case length >= 0:
			c.remaining = length
			c.done = length == 0
		default:
			c.toEOF, c.keep = true, false
		}
		return nil
	}
}

// hasToken reports whether the comma-separated list v holds token (case
// insensitive).
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var item []byte
		item, v, _ = bytes.Cut(v, []byte(","))
		if bytes.EqualFold(bytes.Trim(item, " \t"), []byte(token)) {
			return true
		}
	}
	return false
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// Read reads the answer's body.
func (c *conn) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.err != nil {
		return 0, c.err
	}
	var n int
	var err error
	switch {
	case c.chunked != nil:
		n, err = c.chunked.Read(p)
		if err == io.EOF {
			if err = c.skipTrailer(); err == nil {
				c.done, err = true, io.EOF
			}
		}
	case c.toEOF:
		n, err = c.br.Read(p)
		if err == io.EOF {
			c.done = true
		}
	default:
		if int64(len(p)) > c.remaining {
			p = p[:c.remaining]
		}
		n, err = c.br.Read(p)
		c.remaining -= int64(n)
		switch {
		case c.remaining == 0:
			c.done, err = true, nil
		case err == io.EOF:
			err = io.ErrUnexpectedEOF
		}
	}
	if err != nil && err != io.EOF {
		c.err = c.explain(err)
		return n, c.err
	}
	return n, err
}

// skipTrailer reads the trailer section after the last chunk.
func (c *conn) skipTrailer() error {
	budget := maxAnswerHead
	for {
		line, err := c.readLine(&budget)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if len(line) == 0 {
			return nil
		}
	}
}

// discardBody reads what is left of the body, so that the connection can
// be reused.
func (c *conn) discardBody() error {
	if c.chunked == nil && !c.toEOF && !c.done && c.err == nil {
		// NB: a sized body is skipped in the reader's buffer, not copied.
		n, err := c.br.Discard(int(c.remaining))
		c.remaining -= int64(n)
		if c.remaining == 0 {
			c.done = true
			return nil
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		c.err = c.explain(err)
		return c.err
	}
	_, err := io.Copy(io.Discard, c)
	return err
}

// Close ends the exchange: the connection is kept for the next one when
// the body was read to its end, else closed.
func (c *conn) Close() error {
	if !c.done && c.err == nil && c.chunked == nil && !c.toEOF && int64(c.br.Buffered()) >= c.remaining {
		// What is left of a sized body has arrived: skip it.
		_ = c.discardBody()
	}
	stopped := c.stop == nil || c.stop()
	if c.done && c.err == nil && c.keep && stopped {
		c.d.put(c)
		return nil
	}
	c.fail()
	return nil
}

// fail closes a connection whose exchange did not end cleanly.
func (c *conn) fail() {
	if c.stop != nil {
		c.stop()
	}
	c.ctx, c.stop = nil, nil
	_ = c.nc.Close()
}

// explain says why an exchange failed: the caller's context when it
// ended, the client's timeout as context.DeadlineExceeded (as when it
// bounded an http.Client's request), else err.
func (c *conn) explain(err error) error {
	if c.ctx != nil {
		if cerr := c.ctx.Err(); cerr != nil {
			return cerr
		}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}
