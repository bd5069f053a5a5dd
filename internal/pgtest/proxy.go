package pgtest

import (
	"net"
	"strconv"
	"sync"
	"time"
)

// Cut says when an armed Proxy drops a connection, relative to the next
// extended-protocol execution (a chunk from the client that starts with a
// Bind message, 'B') on any connection through it. Each arming cuts once.
type Cut int

const (
	// CutBeforeServer drops the connection instead of forwarding the
	// statement: the server never sees it.
	CutBeforeServer Cut = iota + 1
	// CutBeforeReply forwards the statement and drops the connection when
	// the server's first answer to it arrives, without passing it on: the
	// statement ran (and, in autocommit, committed) but the client never
	// hears so.
	CutBeforeReply
	// PartitionAfterDelay forwards the statement and, after a delay, drops
	// the client's side only: the server's side stays open and silent (its
	// output is read and discarded) until the proxy closes, as in a network
	// partition. A backend blocked meanwhile (on a lock, say) never learns
	// that its client is gone.
	PartitionAfterDelay
)

// Proxy forwards TCP connections from a loopback port to a server and can
// drop one at a chosen moment of the protocol: the tests' way to lose a
// connection during COMMIT.
type Proxy struct {
	l      net.Listener
	target string

	mu       sync.Mutex
	armed    Cut
	delay    time.Duration
	refuse   bool
	noCancel bool
	cuts     int
	conns    map[net.Conn]bool
	closing  bool
}

// NewProxy listens on 127.0.0.1 and forwards to 127.0.0.1:port. Close it.
func NewProxy(port int) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{l: l, target: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), conns: map[net.Conn]bool{}}
	go p.accept()
	return p, nil
}

// Port is the proxy's own port.
func (p *Proxy) Port() int { return p.l.Addr().(*net.TCPAddr).Port }

// Arm makes the next execution through the proxy end as cut says; delay is
// CutAfterDelay's.
func (p *Proxy) Arm(cut Cut, delay time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.delay = cut, delay
}

// Cuts reports how many connections an arming has dropped.
func (p *Proxy) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

// Refuse makes the proxy drop every new connection at once (the database
// looks down) until called with false.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
}

// DropCancels makes the proxy drop PostgreSQL cancel requests (a client's
// out-of-band "stop my statement"), as a partition would: then only the
// store's own settling can stop a statement the proxy cut off.
func (p *Proxy) DropCancels(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noCancel = on
}

// isCancelRequest reports whether a connection's first bytes are a
// CancelRequest: length 16, code 80877102.
func isCancelRequest(b []byte) bool {
	return len(b) >= 8 && b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 16 &&
		b[4] == 0x04 && b[5] == 0xd2 && b[6] == 0x16 && b[7] == 0x2e
}

// Close stops listening and drops every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closing = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	return p.l.Close()
}

func (p *Proxy) accept() {
	for {
		client, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse || p.closing
		p.mu.Unlock()
		if refuse {
			_ = client.Close()
			continue
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns[client], p.conns[server] = true, true
		p.mu.Unlock()
		go p.pipe(client, server)
	}
}

// pipe relays one connection until either side ends it or a cut drops it.
func (p *Proxy) pipe(client, server net.Conn) {
	var (
		once          sync.Once
		mu            sync.Mutex
		awaitingReply bool // CutBeforeReply: drop at the server's next bytes
		partitioned   bool // PartitionAfterDelay: the server's side stays open
	)
	drop := func() {
		once.Do(func() {
			_ = client.Close()
			_ = server.Close()
			p.mu.Lock()
			delete(p.conns, client)
			delete(p.conns, server)
			p.mu.Unlock()
		})
	}
	// end drops both sides unless a partition keeps the server's open (it
	// closes with the proxy).
	end := func() {
		mu.Lock()
		defer mu.Unlock()
		if !partitioned {
			drop()
		}
	}
	go func() {
		defer end()
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				mu.Lock()
				cut, silent := awaitingReply, partitioned
				mu.Unlock()
				if cut {
					p.countCut()
					drop()
					return
				}
				if !silent {
					if _, werr := client.Write(buf[:n]); werr != nil {
						return
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer end()
	buf := make([]byte, 64<<10)
	for first := true; ; first = false {
		n, err := client.Read(buf)
		if n > 0 {
			p.mu.Lock()
			noCancel := p.noCancel
			p.mu.Unlock()
			if first && noCancel && isCancelRequest(buf[:n]) {
				drop()
				return
			}
			cut, delay := p.take(buf[0])
			switch cut {
			case CutBeforeServer:
				p.countCut()
				drop()
				return
			case CutBeforeReply:
				mu.Lock()
				awaitingReply = true
				mu.Unlock()
			case PartitionAfterDelay:
				time.AfterFunc(delay, func() {
					mu.Lock()
					partitioned = true
					mu.Unlock()
					p.countCut()
					_ = client.Close()
				})
			}
			if _, werr := server.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// take consumes the arming if this chunk (first byte first) starts an
// execution.
func (p *Proxy) take(first byte) (Cut, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed == 0 || first != 'B' {
		return 0, 0
	}
	cut := p.armed
	p.armed = 0
	return cut, p.delay
}

func (p *Proxy) countCut() {
	p.mu.Lock()
	p.cuts++
	p.mu.Unlock()
}
