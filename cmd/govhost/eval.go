package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/pathfacts"
	"github.com/govhost/govhost/plugins/builtin"
)

// evalRequest is one line of eval's input.
type evalRequest struct {
	Tool      string          `json:"tool"`
	Action    string          `json:"action"`
	Operation string          `json:"operation"`
	Arguments json.RawMessage `json:"arguments"`
	Cwd       string          `json:"cwd"`
	// Workspace is the task workspace the dry run assumes (pathguard's
	// "$workspace"); absent: --workspace.
	Workspace string `json:"workspace"`
}

// evalGate is one gate's answer in eval's output.
type evalGate struct {
	GateID      string `json:"gate_id"`
	Level       string `json:"level"`
	Decision    string `json:"decision"`
	ReasonCode  string `json:"reason_code"`
	Message     string `json:"message,omitempty"`
	MatchedRule string `json:"matched_rule,omitempty"`
	Detail      string `json:"detail,omitempty"`
	Error       string `json:"error,omitempty"`
}

// evalResult is one line of eval's output.
type evalResult struct {
	Decision    string     `json:"decision"`
	ReasonCode  string     `json:"reason_code"`
	Message     string     `json:"message,omitempty"`
	MatchedRule string     `json:"matched_rule,omitempty"`
	Gates       []evalGate `json:"gates"`
	Error       string     `json:"error,omitempty"`
}

// newEvalCmd evaluates JSON Lines requests through Wasm gates without a
// data directory: one gate (--gate) or every applicable gate of a policy
// file (--policy). Exit 0 when every line was evaluated, 2 on a usage
// error or when some line could not be read (its output line says why).
func newEvalCmd() *cobra.Command {
	var gateRef, config, policyFile, cacheDir, workspace string
	c := &cobra.Command{
		Use:   "eval --gate NAME|FILE.wasm [--config JSON|@file] | --policy FILE  < requests.jsonl",
		Short: "Decide JSON Lines requests on stdin with one gate or a policy file (no evidence)",
		Long: `eval reads one request a line on stdin ({"tool", "operation", "action",
"arguments", "cwd"}) and prints one verdict a line: the combined decision and
each gate's answer. Nothing is recorded. Exit 0 when every line was evaluated,
2 on a usage error or when some line could not be read (its output line says why).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (gateRef == "") == (policyFile == "") {
				return usageErrorf("give exactly one of --gate and --policy")
			}
			return runEval(cmd.Context(), gateRef, config, policyFile, cacheDir, workspace, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	f := c.Flags()
	f.StringVar(&gateRef, "gate", "", "built-in gate name ("+strings.Join(builtin.Names(), ", ")+") or a .wasm file")
	f.StringVar(&config, "config", "{}", "the gate's configuration: JSON, or @file")
	f.StringVar(&policyFile, "policy", "", "a policy file (JSON); every gate bound to the request's tool runs")
	f.StringVar(&cacheDir, "cache-dir", defaultCacheDir(), "compilation cache directory (empty: none)")
	f.StringVar(&workspace, "workspace", "", "the task workspace root requests are evaluated in (a request's \"workspace\" overrides it; empty: none)")
	return c
}

func runEval(ctx context.Context, gateRef, config, policyFile, cacheDir, workspace string, stdin io.Reader, stdout io.Writer) error {
	cfg := host.NewConfig()
	if cacheDir != "" {
		cfg = cfg.WithCompilationCacheDir(cacheDir)
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		return usageError(err)
	}
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	if err != nil {
		return usageError(err)
	}
	snap, err := evalSnapshot(gates, gateRef, config, policyFile)
	if err != nil {
		return usageError(err)
	}
	// Load and configure every gate once, side by side, before the first
	// request.
	if err := gates.Prepare(ctx, snap.GateBindings()); err != nil {
		return usageError(err)
	}
	return evalLines(ctx, gates, snap, policyFile == "", workspace, stdin, stdout)
}

// evalSnapshot builds the bindings to run: the policy file's, or one hard
// binding of the single gate to every tool (config is JSON, or @file).
func evalSnapshot(gates *govhost.Gates, gateRef, config, policyFile string) (governance.PolicySnapshot, error) {
	if policyFile != "" {
		f, err := govhost.ReadPolicyFile(policyFile)
		if err != nil {
			return governance.PolicySnapshot{}, err
		}
		return f.Snapshot, gates.Hold(f)
	}
	raw := []byte(config)
	if strings.HasPrefix(config, "@") {
		var err error
		if raw, err = os.ReadFile(config[1:]); err != nil {
			return governance.PolicySnapshot{}, err
		}
	}
	cwd, _ := os.Getwd()
	return gates.OneGatePolicy(gateRef, raw, cwd)
}

func evalLines(ctx context.Context, gates *govhost.Gates, snap governance.PolicySnapshot, everyTool bool, workspace string, stdin io.Reader, stdout io.Writer) error {
	cwd, _ := os.Getwd()
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	var status error
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		res, err := evalOne(ctx, gates, snap, everyTool, []byte(text), cwd, workspace)
		if err != nil {
			res = evalResult{Decision: string(abi.DecisionDeny), ReasonCode: "eval.bad_request", Error: fmt.Sprintf("line %d: %v", line, err), Gates: []evalGate{}}
			status = silentExit(exitUsage)
		}
		out, _ := json.Marshal(res)
		w.Write(out)
		w.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return usageError(err)
	}
	return status
}

// evalOne evaluates one request line. everyTool runs every binding whatever
// its tool ids (the single --gate binding); otherwise only bindings naming
// the request's tool run, as in the controller.
func evalOne(ctx context.Context, gates *govhost.Gates, snap governance.PolicySnapshot, everyTool bool, line []byte, cwd, workspace string) (evalResult, error) {
	var req evalRequest
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return evalResult{}, err
	}
	if req.Tool == "" {
		return evalResult{}, errors.New("tool is required")
	}
	if req.Cwd == "" {
		req.Cwd = cwd
	}
	if req.Workspace == "" {
		req.Workspace = workspace
	}
	call := controller.Call{Tool: req.Tool, Action: req.Action, Operation: req.Operation, Arguments: req.Arguments, Cwd: req.Cwd}
	dry, err := controller.DryRun(ctx, gates, snap, call, controller.DryRunOptions{
		Workspace: req.Workspace, PathFacts: pathfacts.ResolveCall, EveryTool: everyTool,
	})
	if err != nil {
		return evalResult{}, err
	}
	res := evalResult{Decision: string(dry.Decision), ReasonCode: dry.ReasonCode, Message: dry.Message, MatchedRule: dry.MatchedRule, Gates: []evalGate{}}
	for _, g := range dry.Gates {
		eg := evalGate{GateID: g.GateID, Level: string(g.Level), Decision: string(g.Output.Decision), ReasonCode: g.Output.ReasonCode,
			Message: g.Output.Message, MatchedRule: g.Output.MatchedRule, Detail: g.Output.Detail}
		if g.Err != nil {
			eg.Error = g.Err.Error()
		}
		res.Gates = append(res.Gates, eg)
	}
	return res, nil
}
