//go:build !unix

package client

// peek is the idle check's state: none on this system.
type peek struct{}

func (c *conn) bindPeek() {}

// open reports whether an idle connection is still open: not checked on
// this system beyond what was read ahead (a connection the server closed
// fails its next request, which is sent again when nothing of it was
// written or it is a GET).
func (c *conn) open() bool { return c.br.Buffered() == 0 }
