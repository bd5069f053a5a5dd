package client

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUploadModule_RefusedBeforeTheBodyIsSent: an upload asks
// "Expect: 100-continue", so a server that refuses it (upload_busy, as a
// busy govhost does before it reads a body) answers before the module is
// sent: the caller gets the server's error, not a broken pipe halfway
// through a large body, and the bytes never cross the wire. The server
// here answers after the request's head and then counts every byte that
// still arrives until the client hangs up.
// Both transports: the client's own, and net/http's (a caller's
// http.Client).
func TestUploadModule_RefusedBeforeTheBodyIsSent(t *testing.T) {
	t.Run("own", func(t *testing.T) { uploadToARefusingServer(t) })
	t.Run("nethttp", func(t *testing.T) { uploadToARefusingServer(t, HTTPClient(&http.Client{})) })
}

func uploadToARefusingServer(t *testing.T, opts ...Option) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type seen struct {
		expect string
		after  int64
		err    error
	}
	done := make(chan seen, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			done <- seen{err: err}
			return
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(time.Minute))
		br := bufio.NewReader(nc)
		req, err := http.ReadRequest(br)
		if err != nil {
			done <- seen{err: err}
			return
		}
		body := `{"error":{"code":"upload_busy","message":"4 module uploads in progress; retry later"}}`
		_, err = io.WriteString(nc, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: "+
			itoa(len(body))+"\r\n\r\n"+body)
		n, _ := io.Copy(io.Discard, br)
		done <- seen{expect: req.Header.Get("Expect"), after: n, err: err}
	}()

	c, err := New("http://"+ln.Addr().String(), append([]Option{Token("t")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UploadModule(context.Background(), make([]byte, 16<<20))
	var e *Error
	if !errors.As(err, &e) || e.Code != "upload_busy" || e.Status != http.StatusServiceUnavailable {
		t.Fatalf("UploadModule against a busy server: %v, want the server's upload_busy", err)
	}
	s := <-done
	if s.err != nil {
		t.Fatal(s.err)
	}
	if !strings.EqualFold(s.expect, "100-continue") || s.after != 0 {
		t.Fatalf("the upload asked Expect %q and sent %d bytes after the refusal; want 100-continue and none", s.expect, s.after)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
