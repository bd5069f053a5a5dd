// Command e2eproxy is the MCP proxy of mcp's end-to-end approval test: one
// embedded-engine session (mcp.OpenEmbedded, mcp.Proxy.Session, as
// govhost mcp runs it) with an in-process reviewer in place of a person.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/mcp"
)

func main() { os.Exit(run()) }

// run reads GOVHOST_MCP_TEST_DATA (data dir), GOVHOST_MCP_TEST_POLICY
// (policy file), GOVHOST_MCP_TEST_APPROVAL ("reviewer": an in-process
// reviewer answers approvals), GOVHOST_MCP_TEST_HIDE ("1": --hide-denied)
// and GOVHOST_WASM_CACHE; the upstream command follows "--".
func run() int {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	args := os.Args[1:]
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	hostCfg := host.NewConfig().WithCompilationCacheDir(os.Getenv("GOVHOST_WASM_CACHE"))
	opts := mcp.EmbeddedOptions{Engine: govhost.Options{Dir: os.Getenv("GOVHOST_MCP_TEST_DATA"), Host: &hostCfg}, PolicyFile: os.Getenv("GOVHOST_MCP_TEST_POLICY")}
	if os.Getenv("GOVHOST_MCP_TEST_APPROVAL") == "reviewer" {
		// A reviewer that approves every request except one whose
		// arguments mention "held": that one waits until the call ends.
		opts.Approvals = func(ctx context.Context, req controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			log.Info("helper: approval pending", "tool", req.Tool)
			if strings.Contains(string(req.Arguments), "held") {
				<-ctx.Done()
				return controller.ApprovalDecision{}, ctx.Err()
			}
			return controller.ApprovalDecision{Decision: abi.DecisionAllow, Approver: &governance.ActorRef{Kind: "human", ID: "e2e-reviewer"}}, nil
		}
	}
	emb, err := mcp.OpenEmbedded(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	defer emb.Close(ctx)
	cwd, _ := os.Getwd()
	p := &mcp.Proxy{Name: "fs", Governor: emb.Governor, Cwd: cwd, Log: log, HideDenied: os.Getenv("GOVHOST_MCP_TEST_HIDE") == "1", Bound: emb.Bound}
	return p.Session(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}
