package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
)

// countingServer is a test server that counts the connections it
// accepted and the requests it read.
type countingServer struct {
	*httptest.Server
	conns, requests atomic.Int32
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func newDirectClient(t *testing.T, url string) *Client {
	t.Helper()
	c, err := New(url, Token("t0k3n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.direct == nil {
		t.Fatal("a plain-http base URL without a proxy should use the direct transport")
	}
	return c
}

func writeCompleted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"permit_id":"p","recorded":true}`)
}

// TestDirect_KeepsOneConnectionForSequentialCalls: calls one after the
// other reuse one connection, and each request carries what the server
// checks (method, path, bearer token, JSON body with its length).
func TestDirect_KeepsOneConnectionForSequentialCalls(t *testing.T) {
	task := uuid.New()
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method != "POST" || r.URL.Path != "/v1/tasks/"+task.String()+"/complete":
			w.WriteHeader(http.StatusNotFound)
		case r.Header.Get("Authorization") != "Bearer t0k3n":
			w.WriteHeader(http.StatusUnauthorized)
		case r.Header.Get("Content-Type") != "application/json" || r.ContentLength != int64(len(body)) || string(body) != `{"permit_id":"p"}`:
			w.WriteHeader(http.StatusBadRequest)
		default:
			writeCompleted(w)
		}
	})
	c := newDirectClient(t, srv.URL)
	for i := 0; i < 20; i++ {
		if err := c.Complete(context.Background(), task, api.CompleteRequest{PermitID: "p"}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("20 sequential calls opened %d connections, want 1", n)
	}
}

// TestDirect_ReusesAConnectionAfterAShortDeadline: a call under a
// caller's short deadline leaves its connection reusable once the
// deadline has passed.
func TestDirect_ReusesAConnectionAfterAShortDeadline(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { writeCompleted(w) })
	c := newDirectClient(t, srv.URL)
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := c.Complete(ctx, uuid.Nil, api.CompleteRequest{})
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		time.Sleep(80 * time.Millisecond)
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("three calls past their deadlines opened %d connections, want 1", n)
	}
}

// TestDirect_ReadsEveryFraming: a chunked answer (a large export), one
// whose end is the connection's, and a refusal with its error body.
func TestDirect_ReadsEveryFraming(t *testing.T) {
	big := strings.Repeat(`{"record":"x"}`+"\n", 20000)
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/chains/" + uuid.Nil.String():
			// net/http chunks a body it cannot size before writing.
			for i := 0; i < len(big); i += 1000 {
				_, _ = io.WriteString(w, big[i:min(i+1000, len(big))])
				w.(http.Flusher).Flush()
			}
		case "/v1/tasks":
			hj, _ := w.(http.Hijacker)
			conn, buf, _ := hj.Hijack()
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"tasks\":[]}")
			_ = buf.Flush()
			_ = conn.Close()
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"error":{"code":"forbidden","message":"no"}}`)
		}
	})
	c := newDirectClient(t, srv.URL)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		var out bytes.Buffer
		if err := c.ExportChain(ctx, uuid.Nil, &out); err != nil || out.String() != big {
			t.Fatalf("chunked export: %d of %d bytes, %v", out.Len(), len(big), err)
		}
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("two chunked answers read to their end: %d connections, want 1", n)
	}
	tasks, err := c.Tasks(ctx)
	if err != nil || tasks == nil || len(tasks) != 0 {
		t.Fatalf("an answer that ends with its connection: %v, %v", tasks, err)
	}
	_, err = c.Approvals(ctx)
	var refused *Error
	if !errors.As(err, &refused) || refused.Status != http.StatusForbidden || refused.Code != "forbidden" || refused.Message != "no" {
		t.Fatalf("want the server's refusal as *Error, got %v", err)
	}
	if err := c.Complete(ctx, uuid.Nil, api.CompleteRequest{}); !errors.As(err, &refused) {
		t.Fatalf("after a refusal the connection still serves: %v", err)
	}
}

// TestDirect_AServerThatClosedIdleConnections: right after the server
// dropped its idle connections (a restart, its idle timeout), the next
// calls succeed on a new connection.
func TestDirect_AServerThatClosedIdleConnections(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) { writeCompleted(w) })
	c := newDirectClient(t, srv.URL)
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Complete(ctx, uuid.Nil, api.CompleteRequest{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	srv.CloseClientConnections()
	for i := 0; i < 4; i++ {
		if err := c.Complete(ctx, uuid.Nil, api.CompleteRequest{}); err != nil {
			t.Fatalf("call %d after the server closed its idle connections: %v", i, err)
		}
	}
}

// TestDirect_APostIsNotSentTwice: a server that reads a POST and breaks
// the connection without answering: the call is ErrUnreachable and the
// server saw the request once (it may have acted on it).
func TestDirect_APostIsNotSentTwice(t *testing.T) {
	var calls atomic.Int32
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			writeCompleted(w) // the first call leaves a connection to reuse
			return
		}
		hj, _ := w.(http.Hijacker)
		conn, _, _ := hj.Hijack()
		_ = conn.Close()
	})
	c := newDirectClient(t, srv.URL)
	ctx := context.Background()
	if err := c.Complete(ctx, uuid.Nil, api.CompleteRequest{}); err != nil {
		t.Fatal(err)
	}
	err := c.Complete(ctx, uuid.Nil, api.CompleteRequest{})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("want ErrUnreachable, got %v", err)
	}
	if n := srv.requests.Load(); n != 2 {
		t.Fatalf("the server read %d requests, want 2 (the broken POST not sent again)", n)
	}
}

// TestDirect_TheContextEndsTheCall: a caller's cancelled context ends a
// call the server does not answer, with the context's error.
func TestDirect_TheContextEndsTheCall(t *testing.T) {
	release := make(chan struct{})
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := newDirectClient(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	err := c.Complete(ctx, uuid.Nil, api.CompleteRequest{})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatalf("want ErrUnreachable with the context's cancellation, got %v", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the cancellation did not end the call: %s", took)
	}
}

// TestDirect_OnlyWhenNetHTTPWouldNotDoMore: https, a proxy from the
// environment, or a token that is not a header value go through net/http
// (which refuses a token with a line break instead of sending it).
func TestDirect_OnlyWhenNetHTTPWouldNotDoMore(t *testing.T) {
	for _, tc := range []struct{ url, token string }{
		{"https://127.0.0.1:8181", "t"},
		{"http://127.0.0.1:8181", "t\r\nX-Injected: 1"},
		{"http://user:pw@127.0.0.1:8181", "t"},
	} {
		c, err := New(tc.url, Token(tc.token))
		if err != nil {
			t.Fatal(err)
		}
		if c.direct != nil || c.transport == nil {
			t.Errorf("%s with token %q: want net/http's transport", tc.url, tc.token)
		}
	}
	// net/http reads the proxy variables once a process: a child process
	// checks a base URL it would proxy.
	if os.Getenv("GOVHOST_TEST_PROXIED") == "1" {
		if c, _ := New("http://govhost.example:8181", Token("t")); c.direct != nil {
			t.Error("a base URL net/http would proxy: want net/http's transport")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestDirect_OnlyWhenNetHTTPWouldNotDoMore$", "-test.count", "1")
	cmd.Env = append(os.Environ(), "GOVHOST_TEST_PROXIED=1", "HTTP_PROXY=http://proxy.example:3128", "NO_PROXY=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("with a proxy in the environment: %v\n%s", err, out)
	}
}

// TestDirect_RefusesAMalformedAnswer: an answer that is not HTTP is
// ErrUnreachable, not a hang or a partial result.
func TestDirect_RefusesAMalformedAnswer(t *testing.T) {
	for _, answer := range []string{
		"SSH-2.0-OpenSSH_9.6\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"permit_id\":",
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = http.ReadRequest(bufio.NewReader(conn))
			_, _ = io.WriteString(conn, answer)
			_ = conn.Close()
		}()
		c := newDirectClient(t, "http://"+ln.Addr().String())
		_, err = c.Tasks(context.Background())
		if !errors.Is(err, ErrUnreachable) {
			t.Errorf("answer %q: want ErrUnreachable, got %v", answer, err)
		}
		_ = ln.Close()
	}
}

// TestDirect_AnAnswerBeforeTheBodyIsRead: a server that refuses a large
// body without reading it (and closes the connection) is heard: the
// caller gets its refusal, not a broken pipe.
func TestDirect_AnAnswerBeforeTheBodyIsRead(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = io.WriteString(w, `{"error":{"code":"body_too_large","message":"request body over 1 bytes"}}`)
	})
	c := newDirectClient(t, srv.URL)
	policy := `{"name":"` + strings.Repeat("a", 16<<20) + `"}`
	_, err := c.PutPolicy(context.Background(), json.RawMessage(policy))
	var refused *Error
	if !errors.As(err, &refused) || refused.Code != "body_too_large" {
		t.Fatalf("want the server's refusal, got %v", err)
	}
}

// TestDirect_AnUploadToAServerThatNeverSaysContinue: a module upload asks
// "Expect: 100-continue"; a server that does not answer it gets the body
// after a second all the same, and its answer is the upload's.
func TestDirect_AnUploadToAServerThatNeverSaysContinue(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	module := bytes.Repeat([]byte{7}, 200<<10)
	got := make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			got <- err.Error()
			return
		}
		body, err := io.ReadAll(req.Body) // never says 100 Continue
		if err != nil || !bytes.Equal(body, module) {
			got <- fmt.Sprintf("body of %d bytes, %v", len(body), err)
			return
		}
		got <- req.Header.Get("Expect")
		answer := `{"sha256":"x","created":true}`
		_, _ = fmt.Fprintf(conn, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer)
	}()
	c := newDirectClient(t, "http://"+ln.Addr().String())
	up, err := c.UploadModule(context.Background(), module)
	if err != nil || !up.Created {
		t.Fatalf("upload: %+v, %v", up, err)
	}
	if expect := <-got; expect != "100-continue" {
		t.Fatalf("the server saw: %s", expect)
	}
}

// TestDirect_ABaseURLWithAPath: a server mounted under a path (behind a
// reverse proxy) gets every route under it, as with net/http.
func TestDirect_ABaseURLWithAPath(t *testing.T) {
	var got atomic.Value
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.URL.Path)
		writeCompleted(w)
	})
	c := newDirectClient(t, srv.URL+"/govhost/")
	task := uuid.New()
	if err := c.Complete(context.Background(), task, api.CompleteRequest{PermitID: "p"}); err != nil {
		t.Fatal(err)
	}
	if want := "/govhost/v1/tasks/" + task.String() + "/complete"; got.Load() != want {
		t.Fatalf("the server saw %v, want %s", got.Load(), want)
	}
}
