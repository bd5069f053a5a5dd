package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/server/client"
)

// BenchmarkExchange is HTTP's own floor on this machine: one request and
// its answer on loopback (a complete's body and answer) between the Go
// client and a net/http server whose handler only reads the body and
// writes a fixed answer, from 64 concurrent callers. direct is the
// client's own transport (the default), nethttp the same client given an
// http.Client whose transport keeps as many connections. What a governed
// round trip costs over HTTP beyond twice this is the server's handlers,
// the service and the controller (BenchmarkRoundTrip).
func BenchmarkExchange(b *testing.B) {
	for _, mode := range []string{"direct", "nethttp"} {
		b.Run(mode, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header()["Content-Type"] = []string{"application/json"}
				_, _ = io.WriteString(w, `{"permit_id":"p","recorded":true}`)
			}))
			defer srv.Close()
			opts := []client.Option{client.Token(testToken)}
			if mode == "nethttp" {
				t := http.DefaultTransport.(*http.Transport).Clone()
				t.MaxIdleConnsPerHost = client.MaxIdleConnsPerHost
				opts = append(opts, client.HTTPClient(&http.Client{Transport: t, Timeout: time.Minute}))
			}
			c, err := client.New(srv.URL, opts...)
			if err != nil {
				b.Fatal(err)
			}
			var failed atomic.Bool
			b.SetParallelism(32)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.Complete(context.Background(), uuid.Nil, api.CompleteRequest{PermitID: "p"}); err != nil && !failed.Swap(true) {
						b.Error(err)
					}
				}
			})
			b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
