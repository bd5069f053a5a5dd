package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/mcp"
	"github.com/govhost/govhost/pathfacts"
	"github.com/govhost/govhost/policy/profiles"
	"github.com/govhost/govhost/server/client"
)

type mcpFlags struct {
	name, mapFile, policyFile, policyID, version, resource string
	profile                                                string
	approve                                                string
	approvalTimeout                                        time.Duration
	hideDenied                                             bool
	logLevel                                               string
	server, tokenFile                                      string
	// The streamable HTTP mode (mcp_http.go).
	listen, upstream, upstreamTokenFile, clientTokenFile string
	allowOrigins                                         []string
	allowRemote                                          bool
	sessionIdle                                          time.Duration
}

func newMCPCmd() *cobra.Command {
	var f mcpFlags
	var data *string
	c := &cobra.Command{
		Use:   "mcp [--name NAME] [--data DIR | --server URL] [--policy FILE] (-- COMMAND [ARGS...] | --listen ADDR --upstream URL)",
		Short: "Govern an MCP server's tool calls: run it under a stdio proxy that authorizes every tools/call",
		Long: `mcp starts the MCP server COMMAND as a child process and relays its stdio
session with the client that started govhost: everything is forwarded byte for
byte except tools/call, which is authorized first. A denied call is answered
with a tool result (isError, the gate's message) and never reaches the server;
an allowed call is forwarded and its outcome recorded. The session is one task:
when it ends, its certificate is written to <data>/certificates/ and its path
printed on stderr. The exit status is the server's.

Tool ids are NAME/TOOL. Each tool's operation (read_file, modify_file, ...)
and path arguments come from --map, the built-in mapping of the reference
filesystem server, or the tool's annotations.

With --listen ADDR --upstream URL it is instead a Streamable HTTP intermediary:
clients connect to http://ADDR/mcp with the proxy's own bearer token (DATA/
mcp-client-token, or --client-token-file), and it relays to the upstream MCP
endpoint URL, governing tools/call the same way. Each MCP session
(Mcp-Session-Id) is one task, certified when the session is deleted or the
proxy stops (SIGINT/SIGTERM). The client's token never goes upstream; the
upstream's own credential comes from --upstream-token-file.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.listen != "" || f.upstream != "" {
				if len(args) > 0 {
					return usageErrorf("--listen relays to --upstream URL: no server command with it")
				}
				return runMCPHTTP(cmd, f, *data)
			}
			if len(args) == 0 {
				return usageErrorf("no upstream: govhost mcp [flags] -- COMMAND [ARGS...], or --listen ADDR --upstream URL")
			}
			if cmd.ArgsLenAtDash() != 0 {
				return usageErrorf("the server command goes after --: govhost mcp [flags] -- COMMAND [ARGS...]")
			}
			code, err := runMCP(cmd.Context(), f, *data, args, cmd)
			if err != nil {
				return err
			}
			if code != 0 {
				return silentExit(code)
			}
			return nil
		},
	}
	data = dataFlag(c)
	fl := c.Flags()
	fl.StringVar(&f.name, "name", "mcp", "the server's name in tool ids (NAME/TOOL) and in the mapping file")
	fl.StringVar(&f.mapFile, "map", "", "tool mapping file (operation and path arguments per tool)")
	fl.StringVar(&f.policyFile, "policy", "", "policy file to store, activate and pin (default: --policy-id/--policy-version, else the bound policy)")
	fl.StringVar(&f.policyID, "policy-id", "", "pin this stored policy id (with --policy-version)")
	fl.StringVar(&f.version, "policy-version", "", "pin this stored policy version")
	fl.StringVar(&f.resource, "resource", "", "resolve the policy bound to this resource label")
	fl.StringVar(&f.profile, "profile", "", "the default coding-agent policy's profile installed when no policy is given and none is bound: strict, balanced or permissive (default balanced)")
	fl.StringVar(&f.approve, "approve", "none", "who answers require_approval: none (deny) or prompt (ask on the terminal, /dev/tty)")
	fl.DurationVar(&f.approvalTimeout, "approval-timeout", 2*time.Minute, "how long a call may wait for approval before it is denied")
	fl.BoolVar(&f.hideDenied, "hide-denied", false, "leave out of tools/list the tools no binding of the policy names")
	fl.StringVar(&f.logLevel, "log-level", "warn", "proxy log level on stderr: debug, info, warn, error")
	fl.StringVar(&f.server, "server", "", "govern through a running govhost serve at this URL instead of the embedded engine (approvals through its API)")
	fl.StringVar(&f.tokenFile, "token-file", "", "the sidecar's bearer token file, with --server (default DATA/token)")
	fl.StringVar(&f.listen, "listen", "", "serve a Streamable HTTP MCP endpoint at http://ADDR/mcp (loopback; with --upstream)")
	fl.StringVar(&f.upstream, "upstream", "", "the upstream Streamable HTTP MCP endpoint URL, with --listen")
	fl.StringVar(&f.upstreamTokenFile, "upstream-token-file", "", "a file holding the upstream's bearer token (the client's token is never passed on)")
	fl.StringVar(&f.clientTokenFile, "client-token-file", "", "the bearer token clients must send, with --listen (default DATA/mcp-client-token, created mode 0600)")
	fl.StringSliceVar(&f.allowOrigins, "allow-origin", nil, "an Origin accepted beyond loopback ones (scheme://host:port), with --listen; repeatable")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "let --listen bind beyond loopback")
	fl.DurationVar(&f.sessionIdle, "session-idle", 15*time.Minute, "with --listen, close and certify a session idle (no request or stream open) this long; 0 = never")
	return c
}

func runMCP(ctx context.Context, f mcpFlags, dataDir string, command []string, cmd *cobra.Command) (int, error) {
	stderr := cmd.ErrOrStderr()
	log, mapping, err := mcpLogAndMapping(f, stderr)
	if err != nil {
		return 0, err
	}
	if f.server != "" {
		return runMCPRemote(ctx, f, dataDir, command, mapping, log, cmd)
	}
	emb, closeTTY, err := openMCPEmbedded(ctx, f, dataDir, false)
	if err != nil {
		return 0, err
	}
	defer closeTTY()
	defer emb.Close(context.WithoutCancel(ctx))
	cwd, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stderr, "govhost mcp: %s under policy %s@%s; task %s\n", strings.Join(command, " "), emb.Policy.PolicyID(), emb.Policy.Version(), emb.Governor.Task.ID())
	p := &mcp.Proxy{
		Name: f.name, Governor: emb.Governor, Mapper: mcp.Mapper{Server: f.name, File: mapping},
		Cwd: cwd, HideDenied: f.hideDenied, Bound: emb.Bound, Log: log,
	}
	return p.Session(ctx, command, cmd.InOrStdin(), cmd.OutOrStdout(), stderr), nil
}

func mcpLogAndMapping(f mcpFlags, stderr io.Writer) (*slog.Logger, *mcp.MappingFile, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, nil, usageErrorf("--log-level: %v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if f.mapFile == "" {
		return log, nil, nil
	}
	m, err := mcp.LoadMapping(f.mapFile)
	if err != nil {
		return nil, nil, usageError(err)
	}
	return log, m, nil
}

// openMCPEmbedded opens the embedded engine for the proxy: the policy
// pinned by the flags, approvals by --approve (the returned func closes
// the terminal). perSession opens no task (the HTTP mode opens one per
// session).
func openMCPEmbedded(ctx context.Context, f mcpFlags, dataDir string, perSession bool) (*mcp.Embedded, func(), error) {
	noop := func() {}
	if f.profile != "" {
		if f.policyFile != "" || f.policyID != "" || f.version != "" || f.resource != "" {
			return nil, noop, usageErrorf("--profile names the default policy installed when none is bound: drop --policy, --policy-id, --policy-version and --resource")
		}
		if _, err := profiles.File(f.profile); err != nil {
			return nil, noop, usageError(err)
		}
	}
	engine := engineOptions(ctx, dataDir)
	engine.WarmBuiltins = true // every proxied tool call runs its policy's gates
	opts := mcp.EmbeddedOptions{
		Engine: engine, PolicyFile: f.policyFile, Version: f.version, Resource: f.resource, Profile: f.profile,
		ApprovalTimeout: f.approvalTimeout, TaskPerSession: perSession,
	}
	if f.policyID != "" {
		id, err := uuid.Parse(f.policyID)
		if err != nil {
			return nil, noop, usageErrorf("--policy-id must be a UUID")
		}
		opts.PolicyID = id
	}
	closeTTY := noop
	switch f.approve {
	case "none":
	case "prompt":
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, noop, usageErrorf("--approve prompt needs a terminal: %v", err)
		}
		closeTTY = func() { tty.Close() }
		user := os.Getenv("USER")
		if user == "" {
			user = "terminal"
		}
		opts.Approvals = mcp.PromptApprover(tty, tty, user)
		opts.Actor = &governance.ActorRef{Kind: "user", ID: user}
	default:
		return nil, noop, usageErrorf("--approve: want none or prompt")
	}
	emb, err := mcp.OpenEmbedded(ctx, opts)
	if errors.Is(err, pebblestore.ErrLocked) {
		closeTTY()
		return nil, noop, usageErrorf("%v: the data directory is held by another process (another govhost mcp, or a govhost serve: give each proxy its own --data)", err)
	}
	if err != nil {
		closeTTY()
		return nil, noop, usageError(err)
	}
	return emb, closeTTY, nil
}

// runMCPRemote is govhost mcp --server: the session is a task on the
// sidecar, approvals wait on its approvals API.
func runMCPRemote(ctx context.Context, f mcpFlags, dataDir string, command []string, mapping *mcp.MappingFile, log *slog.Logger, cmd *cobra.Command) (int, error) {
	openTask, err := remoteTasks(f, dataDir)
	if err != nil {
		return 0, err
	}
	gov, err := openTask(ctx)
	if err != nil {
		return 0, invalidError(err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	stderr := cmd.ErrOrStderr()
	fmt.Fprintf(stderr, "govhost mcp: %s via %s under policy %s@%s; task %s\n", strings.Join(command, " "), f.server, gov.Task.PolicyID, gov.Task.PolicyVersion, gov.Task.TaskID)
	p := &mcp.Proxy{
		Name: f.name, Governor: gov, Mapper: mcp.Mapper{Server: f.name, File: mapping}, Cwd: cwd, HideDenied: f.hideDenied, Log: log,
	}
	return p.Session(ctx, command, cmd.InOrStdin(), cmd.OutOrStdout(), stderr), nil
}

// remoteTasks checks the --server flags and returns what opens one
// session's task on the sidecar.
func remoteTasks(f mcpFlags, dataDir string) (func(context.Context) (*mcp.RemoteGovernor, error), error) {
	if f.policyFile != "" || f.profile != "" || f.approve != "none" {
		return nil, usageErrorf("with --server the sidecar holds the policy and the approvals: drop --policy, --profile and --approve (use govhost serve --policy or --profile, and its approvals API)")
	}
	tokenFile := f.tokenFile
	if tokenFile == "" {
		tokenFile = filepath.Join(dataDir, "token")
	}
	c, err := client.New(f.server, client.TokenFromFile(tokenFile))
	if err != nil {
		return nil, usageError(err)
	}
	base := strings.TrimRight(f.server, "/")
	workspace := ""
	if wd, err := os.Getwd(); err == nil {
		workspace = pathfacts.Workspace(wd)
	}
	return func(ctx context.Context) (*mcp.RemoteGovernor, error) {
		req := api.OpenTaskRequest{PolicyID: f.policyID, Version: f.version, Resource: f.resource, Workspace: workspace}
		gov, err := mcp.OpenRemote(ctx, c, base, req, f.approvalTimeout)
		if err != nil {
			return nil, fmt.Errorf("open a task on %s: %w", f.server, err)
		}
		return gov, nil
	}, nil
}
