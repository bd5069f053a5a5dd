package mcp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/mcp"
	"github.com/govhost/govhost/policy/policyfile"
)

// echoHTTPUpstream answers every POSTed request with a small tool result
// carrying the request's id as application/json, as fast as it can: the
// local Streamable HTTP upstream both sides of the benchmark call.
func echoHTTPUpstream(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m, err := mcp.Parse(body)
	if err != nil || m.Kind != mcp.KindRequest {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, m.ID)
}

// BenchmarkHTTP_AllowedToolsCall: an allowed tools/call through the
// Streamable HTTP intermediary (embedded engine, workspace policy on the
// built-in pathguard, durable Pebble evidence) against the same local
// upstream POSTed to directly, alternating in one run, both over loopback
// TCP with keep-alive. Reports p50/p99 of each and the p50 the proxy adds.
func BenchmarkHTTP_AllowedToolsCall(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	root, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	file := filepath.Join(root, "f.txt")
	require.NoError(b, os.WriteFile(file, []byte("x"), 0o644))
	policy, err := policyfile.WorkspaceTemplate(policyfile.WorkspaceOptions{PolicyID: uuid.New(), Version: "1", Root: root, Tools: []string{"bench/read_file"}})
	require.NoError(b, err)
	policyPath := filepath.Join(dir, "policy.json")
	require.NoError(b, os.WriteFile(policyPath, policy, 0o644))
	hostCfg := host.NewConfig()
	if c := os.Getenv("GOVHOST_WASM_CACHE"); c != "" {
		hostCfg = hostCfg.WithCompilationCacheDir(c)
	}
	emb, err := mcp.OpenEmbedded(ctx, mcp.EmbeddedOptions{Engine: govhost.Options{Dir: filepath.Join(dir, "data"), Host: &hostCfg}, PolicyFile: policyPath, TaskPerSession: true})
	require.NoError(b, err)
	defer emb.Close(ctx)

	upstream := httptest.NewServer(http.HandlerFunc(echoHTTPUpstream))
	defer upstream.Close()
	h, err := mcp.NewHTTPProxy(&mcp.HTTPProxy{
		Proxy: mcp.Proxy{Name: "bench", Mapper: mcp.Mapper{Server: "bench", File: &mcp.MappingFile{
			Tools: map[string]mcp.ToolSpec{"read_file": {Operation: "read_file", Paths: []string{"path"}}},
		}}, Cwd: root},
		Upstream: upstream.URL, ClientToken: "bench-token-0123456789abcdef0123456789",
		OpenTask: func(ctx context.Context) (mcp.Governor, error) { return emb.NewTask(ctx) },
	})
	require.NoError(b, err)
	proxy := httptest.NewServer(h)
	defer func() { proxy.Close(); h.Shutdown(ctx) }()

	post := func(url string, i int) time.Duration {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"path":%q}}}`, i, file)
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
		require.NoError(b, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer bench-token-0123456789abcdef0123456789")
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		require.NoError(b, err)
		require.Equal(b, http.StatusOK, resp.StatusCode, "%s", out)
		require.NotContains(b, string(out), "isError", "the call is allowed")
		return took
	}
	for i := 0; i < 20; i++ { // warm the gate pools and the connections
		post(proxy.URL, -1-i)
		post(upstream.URL, -1-i)
	}
	ds := make([]time.Duration, 0, b.N)
	ps := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ds = append(ds, post(upstream.URL, i))
		ps = append(ps, post(proxy.URL, i))
	}
	b.StopTimer()
	pct := func(xs []time.Duration, q float64) float64 {
		slices.Sort(xs)
		return float64(xs[int(q*float64(len(xs)-1))].Microseconds())
	}
	d50, d99, p50, p99 := pct(ds, 0.5), pct(ds, 0.99), pct(ps, 0.5), pct(ps, 0.99)
	b.ReportMetric(d50, "direct-p50-µs")
	b.ReportMetric(d99, "direct-p99-µs")
	b.ReportMetric(p50, "proxied-p50-µs")
	b.ReportMetric(p99, "proxied-p99-µs")
	b.ReportMetric(p50-d50, "added-p50-µs")
}
