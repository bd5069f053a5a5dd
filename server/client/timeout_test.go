package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
)

// TestClient_OwnTransportKeepsTheTimeout: the client's own requests skip
// http.Client but stay bounded by its timeout (here shortened): a server
// that never answers is ErrUnreachable, not a hang; the caller's own
// http.Client (HTTPClient) is used as given.
func TestClient_OwnTransportKeepsTheTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)

	c, err := New(srv.URL, Token("t"))
	if err != nil {
		t.Fatal(err)
	}
	if c.direct == nil && c.transport == nil {
		t.Fatal("the default client should send through its own transport")
	}
	c.timeout = 100 * time.Millisecond
	start := time.Now()
	_, err = c.Authorize(context.Background(), uuid.New(), api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader"}})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("want ErrUnreachable after the deadline, got %v", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("the timeout did not bound the request: %s", took)
	}

	given := &http.Client{Timeout: 100 * time.Millisecond}
	c, err = New(srv.URL, HTTPClient(given))
	if err != nil {
		t.Fatal(err)
	}
	if c.direct != nil || c.transport != nil || c.http != given {
		t.Fatal("a caller's http.Client must be used as given")
	}
	if _, err := c.Authorize(context.Background(), uuid.New(), api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "reader"}}); !errors.Is(err, ErrUnreachable) {
		t.Fatalf("want ErrUnreachable, got %v", err)
	}
}
