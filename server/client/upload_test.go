package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// countingConn counts the bytes the client writes.
type countingConn struct {
	net.Conn
	written *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// TestUploadModule_RefusedBeforeTheBodyIsSent: an upload asks
// "Expect: 100-continue", so a server that refuses it (upload_busy, as a
// busy govhost does before it reads a body) answers before the module is
// sent: the caller gets the server's error, not a broken pipe halfway
// through a large body, and the bytes never cross the wire.
func TestUploadModule_RefusedBeforeTheBodyIsSent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"upload_busy","message":"4 module uploads in progress; retry later"}}`))
	}))
	defer srv.Close()

	c, err := New(srv.URL, Token("t"))
	if err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	dial := c.direct.dial
	c.direct.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{conn, &written}, nil
	}
	module := make([]byte, 16<<20)
	_, err = c.UploadModule(context.Background(), module)
	var e *Error
	if !errors.As(err, &e) || e.Code != "upload_busy" || e.Status != http.StatusServiceUnavailable {
		t.Fatalf("UploadModule against a busy server: %v, want the server's upload_busy", err)
	}
	if n := written.Load(); n > 64<<10 {
		t.Fatalf("the client sent %d bytes of a refused upload; want the headers only", n)
	}
}
