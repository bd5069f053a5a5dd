package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

// echoUpstream answers every request line with a small tool result
// carrying the request's id, as fast as it can: the local upstream both
// sides of the benchmark call.
func echoUpstream(in io.Reader, out io.Writer) {
	br := bufio.NewReader(in)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		m, err := mcp.Parse(line)
		if err != nil || m.Kind != mcp.KindRequest {
			continue
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", m.ID)
	}
}

type rpcPipe struct {
	w io.Writer
	r *bufio.Reader
}

func (p rpcPipe) roundTrip(b *testing.B, i int, path string) time.Duration {
	start := time.Now()
	fmt.Fprintf(p.w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"path":%q}}}`+"\n", i, path)
	if _, err := p.r.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkRelay_AllowedToolsCall: an allowed tools/call through the proxy
// (embedded engine, workspace policy on the built-in pathguard, durable
// Pebble evidence: four records per call, two WAL syncs) against the same
// local upstream called directly, alternating in one run. Reports p50/p99
// of each and the p50 the proxy adds.
func BenchmarkRelay_AllowedToolsCall(b *testing.B) {
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
	emb, err := mcp.OpenEmbedded(ctx, mcp.EmbeddedOptions{Engine: govhost.Options{Dir: filepath.Join(dir, "data"), Host: &hostCfg}, PolicyFile: policyPath})
	require.NoError(b, err)
	defer emb.Close(ctx)

	// Direct: client ↔ upstream.
	dIn, dInW := io.Pipe()
	dOutR, dOut := io.Pipe()
	go echoUpstream(dIn, dOut)
	direct := rpcPipe{dInW, bufio.NewReader(dOutR)}

	// Proxied: client ↔ relay ↔ upstream.
	cIn, cInW := io.Pipe()
	cOutR, cOut := io.Pipe()
	uIn, uInW := io.Pipe()
	uOutR, uOut := io.Pipe()
	go echoUpstream(uIn, uOut)
	p := &mcp.Proxy{Name: "bench", Governor: emb.Governor, Mapper: mcp.Mapper{Server: "bench", File: &mcp.MappingFile{
		Tools: map[string]mcp.ToolSpec{"read_file": {Operation: "read_file", Paths: []string{"path"}}},
	}}, Cwd: root}
	done := make(chan error, 1)
	go func() { done <- p.Relay(ctx, cIn, cOut, mcp.Upstream{In: uInW, Out: uOutR}) }()
	proxied := rpcPipe{cInW, bufio.NewReader(cOutR)}

	for i := 0; i < 20; i++ { // warm the gate pools
		proxied.roundTrip(b, -1-i, file)
	}
	ds := make([]time.Duration, 0, b.N)
	ps := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ds = append(ds, direct.roundTrip(b, i, file))
		ps = append(ps, proxied.roundTrip(b, i, file))
	}
	b.StopTimer()
	_ = cInW.Close()
	_ = uOut.Close()
	<-done
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
