package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/mcp"
	"github.com/govhost/govhost/server"
)

// mcpClientTokenFile is the HTTP proxy's own client token in the data
// directory (not the sidecar's token: a client of the proxy is not a
// client of the sidecar).
const mcpClientTokenFile = "mcp-client-token"

// runMCPHTTP is govhost mcp --listen ADDR --upstream URL: the Streamable
// HTTP intermediary, until SIGINT or SIGTERM; then every session's task is
// closed and certified.
func runMCPHTTP(cmd *cobra.Command, f mcpFlags, dataDir string) error {
	if f.listen == "" || f.upstream == "" {
		return usageErrorf("--listen and --upstream go together")
	}
	stderr := cmd.ErrOrStderr()
	log, mapping, err := mcpLogAndMapping(f, stderr)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usageErrorf("--listen: %v", err)
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if !loopback && !f.allowRemote {
		return usageErrorf("--listen %s is not a loopback address: the proxy governs whoever reaches it; pass --allow-remote if you mean it", f.listen)
	}
	tokenFile := f.clientTokenFile
	if tokenFile == "" {
		tokenFile = filepath.Join(dataDir, mcpClientTokenFile)
	}
	token, created, err := server.LoadOrCreateToken(tokenFile)
	if err != nil {
		return usageError(err)
	}
	var upstreamToken string
	if f.upstreamTokenFile != "" {
		b, err := os.ReadFile(f.upstreamTokenFile)
		if err != nil {
			return usageError(err)
		}
		if upstreamToken = strings.TrimSpace(string(b)); upstreamToken == "" {
			return usageErrorf("--upstream-token-file %s is empty", f.upstreamTokenFile)
		}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	h := &mcp.HTTPProxy{
		Proxy:    mcp.Proxy{Name: f.name, Mapper: mcp.Mapper{Server: f.name, File: mapping}, Cwd: cwd, HideDenied: f.hideDenied, Log: log},
		Upstream: f.upstream, UpstreamToken: upstreamToken, ClientToken: token, AllowedOrigins: f.allowOrigins, IdleTimeout: f.sessionIdle,
		LoopbackHost: loopback,
		Certified: func(session, where string, err error) {
			if session == "" {
				session = "(none)" // the requests of a stateless upstream
			}
			if err != nil {
				fmt.Fprintf(stderr, "govhost mcp: session %s not certified: %v\n", session, err)
				return
			}
			fmt.Fprintf(stderr, "govhost mcp: session %s closed; certificate: %s\n", session, where)
		},
	}
	// Set below, once the engine or the sidecar client is open: the
	// configuration is checked first.
	var openTask func(context.Context) (mcp.Governor, error)
	h.OpenTask = func(ctx context.Context) (mcp.Governor, error) { return openTask(ctx) }
	if _, err := mcp.NewHTTPProxy(h); err != nil {
		return usageError(err)
	}
	policyNote := ""
	if f.server != "" {
		remote, err := remoteTasks(f, dataDir)
		if err != nil {
			return err
		}
		openTask = func(ctx context.Context) (mcp.Governor, error) { return remote(ctx) }
		policyNote = "via " + f.server
	} else {
		emb, closeTTY, err := openMCPEmbedded(ctx, f, dataDir, true)
		if err != nil {
			return err
		}
		defer closeTTY()
		defer emb.Close(context.WithoutCancel(ctx))
		h.Proxy.Bound = emb.Bound
		openTask = func(ctx context.Context) (mcp.Governor, error) { return emb.NewTask(ctx) }
		policyNote = fmt.Sprintf("under policy %s@%s", emb.Policy.PolicyID(), emb.Policy.Version())
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return usageError(err)
	}
	// The endpoint is /mcp, and the upstream's own endpoint path too, so a
	// client's URL can change only its host and port.
	paths := map[string]bool{"/mcp": true}
	if u, err := url.Parse(f.upstream); err == nil && u.Path != "" {
		paths[u.Path] = true
	}
	endpoint := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !paths[r.URL.Path] {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: endpoint, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	reapCtx, stopReaping := context.WithCancel(ctx)
	defer stopReaping()
	go h.ReapIdle(reapCtx)
	tokenNote := ""
	if created {
		tokenNote = " (created now, mode 0600)"
	}
	fmt.Fprintf(stderr, "govhost mcp: http://%s/mcp -> %s %s\n", ln.Addr(), f.upstream, policyNote)
	fmt.Fprintf(stderr, "govhost mcp: client token: %s%s (clients send Authorization: Bearer <token>)\n", tokenFile, tokenNote)
	select {
	case <-ctx.Done():
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	// SSE streams never end on their own: stop accepting, give requests a
	// moment, then close what is left; the sessions' tasks close after.
	graceCtx, graceCancel := context.WithTimeout(shutdownCtx, 2*time.Second)
	_ = srv.Shutdown(graceCtx)
	graceCancel()
	_ = srv.Close()
	h.Shutdown(shutdownCtx)
	return nil
}
