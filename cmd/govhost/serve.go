package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/console"
	"github.com/govhost/govhost/hooks"
	"github.com/govhost/govhost/policy/profiles"
	"github.com/govhost/govhost/server"
	"github.com/govhost/govhost/service"
)

// DefaultAddr is where serve listens unless told otherwise: loopback only.
const defaultAddr = "127.0.0.1:8181"

// serveMemoryLimit is serve's soft memory limit (runtime/debug.SetMemoryLimit)
// unless GOMEMLIMIT sets one: the Go heap otherwise grows to twice what is
// live before a collection, and a server holding a few hundred MiB while
// compiling uploaded modules peaked past its 1 GiB resident bound (issue 28's
// soak). Near the limit the collector runs sooner; it never refuses memory.
// 768 MiB leaves a quarter of the bound to what Go does not count (the
// compiled modules' machine code).
const serveMemoryLimit = 768 << 20

type serveOptions struct {
	data, addr, tokenFile, policy, logLevel string
	profile                                 string
	maxBody, maxModuleBody                  int64
	permitLease                             time.Duration
	hookApproval                            string
	hookAllow                               bool
	// The console (issue 24).
	console                 bool
	notifyURL, notifyFormat string
	approvalTimeout         time.Duration
}

func newServeCmd() *cobra.Command {
	var o serveOptions
	var data *string
	c := &cobra.Command{
		Use:   "serve [--data DIR] [--addr HOST:PORT] [--token-file FILE] [--policy FILE | --profile P]",
		Short: "Run the governance sidecar: the HTTP API /v1 every agent asks before a tool call",
		Long: `serve opens the data directory (Pebble evidence and policy stores, the built-in
Wasm gates), makes sure a policy governs (on a first start the default
coding-agent policy, profile --profile, else the one govhost install --profile
recorded, else balanced; or --policy FILE), and serves the HTTP API /v1 on loopback. Every route but /healthz
and /readyz needs the bearer token in the token file (created with mode 0600 on
first start). SIGTERM or SIGINT stops it gracefully: requests in flight finish and
their evidence is written before the stores close.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.data = *data
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return serve(ctx, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	data = dataFlag(c)
	f := c.Flags()
	f.StringVar(&o.addr, "addr", defaultAddr, "listen address (loopback unless you mean it; port 0 picks one)")
	f.StringVar(&o.tokenFile, "token-file", "", "bearer token file (default DATA/token, created on first start)")
	f.StringVar(&o.policy, "policy", "", "a policy file to store, activate and bind globally instead of the default policy")
	f.StringVar(&o.profile, "profile", "", "the default coding-agent policy's profile a first start installs: strict, balanced or permissive (default balanced; govhost policy show --default --profile P prints it)")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error (structured logs on stderr; argument values are never logged)")
	f.Int64Var(&o.maxBody, "max-body", server.DefaultMaxBody, "request body limit in bytes")
	f.Int64Var(&o.maxModuleBody, "max-module-body", api.MaxModuleBytes, "body limit in bytes of a gate module upload, POST /v1/modules (a Go-built gate is about 3.5 MB)")
	f.DurationVar(&o.permitLease, "permit-lease", 0, "how long a permit waits for its completion (default 10m)")
	f.StringVar(&o.hookApproval, "hook-approval", string(hooks.ApprovalAsk), "a coding agent's call that needs approval: ask (the agent's own prompt) or hold (the approval broker); agents that cannot ask are always held")
	f.BoolVar(&o.console, "console", true, "serve the web console at /ui (sign in with the one-time login link printed at start)")
	f.StringVar(&o.notifyURL, "notify", "", "POST each call that waits for approval to this webhook URL, with signed approve / deny links (15 min, single use)")
	f.StringVar(&o.notifyFormat, "notify-format", "json", "the webhook body: json (generic) or slack (an incoming-webhook message)")
	f.DurationVar(&o.approvalTimeout, "approval-timeout", 10*time.Minute, "how long a held call waits for an approver; then it is denied, recorded as decided by system/timeout")
	f.BoolVar(&o.hookAllow, "hook-allow", false, "answer an allowed coding-agent call with the agent's allow instead of no opinion ({}: the agent's own permission rules still apply)")
	return c
}

func serve(ctx context.Context, o serveOptions, stdout, stderr io.Writer) error {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(serveMemoryLimit)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usageErrorf("--log-level: %v", err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	tokenFile := o.tokenFile
	if tokenFile == "" {
		tokenFile = filepath.Join(o.data, server.TokenFileName)
	}
	token, created, err := server.LoadOrCreateToken(tokenFile)
	if err != nil {
		return usageError(err)
	}
	operatorFile := filepath.Join(o.data, server.OperatorTokenFileName)
	operatorToken, operatorCreated, err := server.LoadOrCreateToken(operatorFile)
	if err != nil {
		return usageError(err)
	}
	if operatorToken == token {
		return usageErrorf("%s and %s hold the same token: the operator's must differ from the agents' (remove %s to have a new one made)", operatorFile, tokenFile, operatorFile)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return usageError(err)
	}
	defer ln.Close()
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		log.Warn("listening beyond loopback: every client that reaches this address and holds the token can govern", slog.String("addr", ln.Addr().String()))
	}

	// Every load of a module from outside is answered before the write
	// timeout cuts the connection (server.LoadTimeout).
	opts := engineOptions(ctx, o.data)
	opts.WarmBuiltins = true // it makes the active policies' gates at start
	hostCfg := opts.Host.WithLoadTimeout(server.LoadTimeout)
	opts.Host = &hostCfg
	eng, err := openEngineWith(ctx, opts)
	if err != nil {
		return err
	}
	defer eng.Close(context.WithoutCancel(ctx))
	metrics := server.NewMetrics()
	if o.approvalTimeout <= 0 {
		return usageErrorf("--approval-timeout must be positive")
	}
	if o.notifyURL != "" && !o.console {
		return usageErrorf("--notify needs the console (its links open a confirmation page in it)")
	}
	base := "http://" + ln.Addr().String()
	absToken, _ := filepath.Abs(tokenFile)
	svc, err := service.New(eng, service.Options{PermitLease: o.permitLease, Observer: metrics, Logger: log, ApprovalTimeout: o.approvalTimeout,
		HookApproval: hooks.ApprovalMode(o.hookApproval), HookExplicitAllow: o.hookAllow,
		HookSidecar: hooks.Sidecar{URL: base, TokenFile: absToken}})
	if err != nil {
		return err
	}
	defer svc.Close()
	metrics.Watch(svc)
	if o.policy != "" && o.profile != "" {
		return usageErrorf("--policy and --profile: give one (a profile is a policy file of its own)")
	}
	profile, err := profiles.Choose(o.profile, o.data)
	if err != nil {
		return usageError(err)
	}
	// A policy that does not resolve or whose gates do not load does not
	// stop serve: it starts, says how to repair, and the operator repairs
	// through the API (the tasks it cannot govern fail closed meanwhile).
	pol, installed, err := svc.EnsurePolicy(ctx, o.policy, profile)
	var unresolved *service.UnresolvedError
	if err != nil {
		if o.policy != "" { // the operator's own file: its errors are theirs to fix first
			return invalidError(fmt.Errorf("policy: %w", err))
		}
		unresolved = svc.Unresolved(ctx, err)
	}
	var ui *console.Console
	if o.console {
		if ui, err = console.New(console.Config{Service: svc, BaseURL: base, NotifyURL: o.notifyURL, NotifyFormat: o.notifyFormat, Logger: log}); err != nil {
			return usageError(err)
		}
		defer ui.Close()
	}
	cfg := server.Config{Service: svc, Token: token, OperatorToken: operatorToken, MaxBody: o.maxBody, MaxModuleBody: o.maxModuleBody, Metrics: metrics, Logger: log}
	if ui != nil {
		cfg.Console = ui
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	httpSrv := srv.HTTPServer(o.addr)
	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()

	// Ready once the active policy's gates are loaded and configured.
	if unresolved == nil {
		if err := svc.WarmUp(ctx, pol); err != nil {
			unresolved = svc.Unresolved(ctx, fmt.Errorf("loading the gates of %s@%s: %w", pol.PolicyID, pol.Version, err))
		}
	}

	how := "installed now"
	if !installed {
		how = "already active"
	}
	tokenNote := ""
	if created {
		tokenNote = " (created now, mode 0600)"
	}
	operatorNote := ""
	if operatorCreated {
		operatorNote = " (created now, mode 0600)"
	}
	fmt.Fprintf(stdout, "govhost serve: listening on %s (data %s)\n", base, o.data)
	if unresolved != nil {
		fmt.Fprintf(stdout, "policy: UNRESOLVED: %v\n", unresolved.Err)
		fmt.Fprintf(stdout, "repair: %s\n", unresolved.Repair)
		log.Error("the global policy does not resolve: tasks fail closed until it is repaired", slog.Any("err", unresolved.Err), slog.String("repair", unresolved.Repair))
	} else {
		fmt.Fprintf(stdout, "policy: %s@%s digest %s (%s)\n", pol.PolicyID, pol.Version, pol.Digest, how)
	}
	if !installed && o.profile != "" && o.policy == "" {
		fmt.Fprintf(stdout, "note: --profile %s applies to a first start; this data directory already has a bound policy\n", o.profile)
	}
	fmt.Fprintf(stdout, "token: %s%s (agents: authorize, complete, hooks)\n", tokenFile, tokenNote)
	fmt.Fprintf(stdout, "operator token: %s%s (policies, bindings, modules, checkpoints, exceptions, break-glass)\n", operatorFile, operatorNote)
	if ui != nil {
		fmt.Fprintf(stdout, "console: %s (one-time login link, expires in %s)\n", ui.LoginLink(), console.DefaultLoginTTL)
	}
	srv.SetReady()
	// Once ready: the other commands on this data directory find the
	// server here and go through it.
	unpublish, err := server.PublishAddress(o.data, base)
	if err != nil {
		return fmt.Errorf("recording the address in the data directory: %w", err)
	}
	defer unpublish()
	fmt.Fprintf(stdout, "next: govhost install --agent claude --data %s   (govern a coding agent through this server)\n", o.data)
	fmt.Fprintf(stdout, "      govhost policy list --data %s, govhost demo --data %s, ...: commands on this data directory now go through this server\n", o.data, o.data)
	fmt.Fprintf(stdout, "try: curl -s -X POST -H \"Authorization: Bearer $(cat %s)\" %s/v1/tasks\n", tokenFile, base)
	log.Info("serving", slog.String("addr", base), slog.String("policy", pol.PolicyID.String()+"@"+pol.Version), slog.Bool("resolved", unresolved == nil))

	select {
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil {
		log.Warn("shutdown", slog.Any("err", err))
	}
	log.Info("stopped")
	return nil
}
