package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/pathfacts"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy/policyfile"
)

const evalUsage = `usage: govhost eval --gate NAME|FILE.wasm [--config JSON|@file] < requests.jsonl
       govhost eval --policy FILE < requests.jsonl`

// evalRequest is one line of eval's input.
type evalRequest struct {
	Tool      string          `json:"tool"`
	Action    string          `json:"action"`
	Operation string          `json:"operation"`
	Arguments json.RawMessage `json:"arguments"`
	Cwd       string          `json:"cwd"`
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

// runEval evaluates JSON Lines requests through Wasm gates without a data
// directory: one gate (--gate) or every applicable gate of a policy file
// (--policy). Exit 0 when every line was evaluated, 2 on a usage error or
// when some line could not be read (its output line says why).
func runEval(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gateRef := fs.String("gate", "", "built-in gate name ("+strings.Join(builtin.Names(), ", ")+") or a .wasm file")
	config := fs.String("config", "{}", "the gate's configuration: JSON, or @file")
	policyFile := fs.String("policy", "", "a policy file (JSON); every gate bound to the request's tool runs")
	cacheDir := fs.String("cache-dir", defaultCacheDir(), "compilation cache directory (empty: none)")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || (*gateRef == "") == (*policyFile == "") {
		fmt.Fprintln(stderr, evalUsage)
		return exitUsage
	}
	ctx := context.Background()
	cfg := host.NewConfig()
	if *cacheDir != "" {
		cfg = cfg.WithCompilationCacheDir(*cacheDir)
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "govhost eval:", err)
		return exitUsage
	}
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	if err != nil {
		fmt.Fprintln(stderr, "govhost eval:", err)
		return exitUsage
	}
	snap, err := evalSnapshot(gates, *gateRef, *config, *policyFile)
	if err != nil {
		fmt.Fprintln(stderr, "govhost eval:", err)
		return exitUsage
	}
	// Load and configure every gate once, before the first request.
	for _, b := range snap.GateBindings() {
		if _, err := gates.GateFor(ctx, b); err != nil {
			fmt.Fprintf(stderr, "govhost eval: gate %s: %v\n", b.GateID(), err)
			return exitUsage
		}
	}
	return evalLines(ctx, gates, snap, *policyFile == "", stdin, stdout)
}

// evalSnapshot builds the bindings to run: the policy file's, or one hard
// binding of the single gate to every tool.
func evalSnapshot(gates *govhost.Gates, gateRef, config, policyFile string) (governance.PolicySnapshot, error) {
	if policyFile != "" {
		return policyfile.LoadFile(policyFile, gates.Resolver(filepath.Dir(policyFile)))
	}
	raw := []byte(config)
	if strings.HasPrefix(config, "@") {
		var err error
		if raw, err = os.ReadFile(config[1:]); err != nil {
			return governance.PolicySnapshot{}, err
		}
	}
	canon, err := policyfile.GateConfig(gateRef, raw)
	if err != nil {
		return governance.PolicySnapshot{}, fmt.Errorf("--config: %w", err)
	}
	cwd, _ := os.Getwd()
	digest, err := gates.Resolver(cwd)(gateRef)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	name := strings.TrimSuffix(filepath.Base(gateRef), ".wasm")
	b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
		GateID: name, AdapterID: govhost.AdapterWasm, Level: governance.LevelHard, ToolIDs: []string{"*"},
		ModuleDigest: digest, Config: canon,
	})
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	return governance.NewPolicySnapshot(evalPolicyID, "eval", []governance.ExecutableGateBinding{b})
}

// evalPolicyID names the one-gate policy eval builds; it is never stored.
var evalPolicyID = uuid.MustParse("00000000-0000-4000-8000-00000000e7a1")

func evalLines(ctx context.Context, gates *govhost.Gates, snap governance.PolicySnapshot, everyTool bool, stdin io.Reader, stdout io.Writer) int {
	cwd, _ := os.Getwd()
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	status := exitOK
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		res, err := evalOne(ctx, gates, snap, everyTool, []byte(text), cwd)
		if err != nil {
			res = evalResult{Decision: string(abi.DecisionDeny), ReasonCode: "eval.bad_request", Error: fmt.Sprintf("line %d: %v", line, err), Gates: []evalGate{}}
			status = exitUsage
		}
		out, _ := json.Marshal(res)
		w.Write(out)
		w.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		w.Flush()
		fmt.Fprintln(os.Stderr, "govhost eval:", err)
		return exitUsage
	}
	return status
}

// evalOne evaluates one request line. everyTool runs every binding whatever
// its tool ids (the single --gate binding); otherwise only bindings naming
// the request's tool run, as in the controller.
func evalOne(ctx context.Context, gates *govhost.Gates, snap governance.PolicySnapshot, everyTool bool, line []byte, cwd string) (evalResult, error) {
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
	call := controller.Call{Tool: req.Tool, Action: req.Action, Operation: req.Operation, Arguments: req.Arguments, Cwd: req.Cwd}
	args, err := controller.ParseArguments(req.Arguments)
	if err != nil {
		return evalResult{}, err
	}
	cwd, facts, err := pathfacts.ResolveCall(req.Cwd, args.Value, args.Order, nil)
	if err != nil {
		return evalResult{}, err
	}
	call.Cwd = cwd
	res := evalResult{Gates: []evalGate{}}
	for _, b := range snap.GateBindings() {
		if !everyTool && !b.AppliesTo(req.Tool) {
			continue
		}
		res.Gates = append(res.Gates, evalBinding(ctx, gates, b, controller.NewGateInput(call, args, facts, b.GateID(), abi.PhaseCheck)))
	}
	combine(&res)
	return res, nil
}

func evalBinding(ctx context.Context, gates *govhost.Gates, b governance.ExecutableGateBinding, in abi.GateInput) evalGate {
	g := evalGate{GateID: b.GateID(), Level: string(b.Level())}
	gate, err := gates.GateFor(ctx, b)
	if err != nil {
		g.Decision, g.ReasonCode, g.Error = string(abi.DecisionDeny), controller.ReasonEvaluatorError, err.Error()
		return g
	}
	out, err := gate.Evaluate(ctx, in)
	if err != nil {
		g.Error = err.Error()
	}
	g.Decision, g.ReasonCode, g.Message, g.MatchedRule, g.Detail = string(out.Decision), out.ReasonCode, out.Message, out.MatchedRule, out.Detail
	return g
}

// combine sets the verdict: deny > require_approval > allow, where an
// advisory gate's deny is reported but does not deny. The verdict's reason,
// message and rule come from the first gate that decided it; with no
// applicable gate the request is denied, as the controller does.
func combine(res *evalResult) {
	rank := func(g evalGate) int {
		switch {
		case g.Decision == string(abi.DecisionDeny) && g.Level != string(governance.LevelAdvisory):
			return 2
		case g.Decision == string(abi.DecisionRequireApproval):
			return 1
		}
		return 0
	}
	if len(res.Gates) == 0 {
		res.Decision, res.ReasonCode = string(abi.DecisionDeny), controller.ReasonNoGateBinding
		return
	}
	best := -1
	for _, g := range res.Gates {
		if r := rank(g); r > best {
			best = r
			res.ReasonCode, res.Message, res.MatchedRule = g.ReasonCode, g.Message, g.MatchedRule
		}
	}
	res.Decision = []string{string(abi.DecisionAllow), string(abi.DecisionRequireApproval), string(abi.DecisionDeny)}[best]
}
