//go:build unix

package client

import "syscall"

// peek is an idle connection's check: one non-blocking peek at its
// socket, through a function bound once (no allocation a check).
type peek struct {
	fn    func(fd uintptr) bool
	buf   [1]byte
	alive bool
}

func (c *conn) bindPeek() {
	c.peek.fn = func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), c.peek.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		c.peek.alive = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true // never wait
	}
}

// open reports whether an idle connection is still open: nothing to read.
// The server sends nothing unasked, so a byte, an end of stream or an
// error means it closed the connection (or broke the protocol).
func (c *conn) open() bool {
	if c.br.Buffered() != 0 {
		return false
	}
	if c.raw == nil {
		return true
	}
	c.peek.alive = false
	return c.raw.Read(c.peek.fn) == nil && c.peek.alive
}
