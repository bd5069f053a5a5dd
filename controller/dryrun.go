package controller

import (
	"context"
	"errors"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// DryRunOptions says how DryRun sees a call.
type DryRunOptions struct {
	// Workspace is the task workspace root to assume (what TaskOptions.Workspace
	// would be), resolved with PathFacts like OpenTask resolves it. Empty:
	// none, so a "$workspace" policy answers as it would in a task without
	// one.
	Workspace string
	// Context is the task's execution context to assume
	// (TaskOptions.Context), merged into the call's request fields.
	Context ExecutionContext
	// PathFacts resolves the cwd and path arguments; nil passes none.
	PathFacts PathResolver
	// EveryTool runs every binding whatever its tool ids (one gate tried on
	// any request); otherwise only the bindings naming the call's tool run,
	// as in a governed call.
	EveryTool bool
}

// DryRunGate is one binding's answer in a dry run.
type DryRunGate struct {
	GateID string
	Level  governance.GateLevel
	Output abi.GateOutput
	// Err is the gate's failure. Its Output then denies with the failure's
	// own code when the error carries one (a host guest error: gate.timeout,
	// gate.trap, …), else control.evaluator_error; a governed call records
	// control.evaluator_error either way.
	Err error
}

// DryRunResult is a dry run's verdict: deny > require_approval > allow,
// where an advisory deny is reported but does not deny; the reason,
// message and rule are the first deciding gate's. No applicable binding
// denies policy.no_gate_binding, as a governed call does.
type DryRunResult struct {
	Decision    abi.Decision
	ReasonCode  string
	Message     string
	MatchedRule string
	Gates       []DryRunGate
}

// DryRun evaluates call against the snapshot's gates without a task,
// evidence, approvals or the tool: every applicable binding runs once, in
// order, in the check phase, on the gate input a governed call would build
// (path facts, workspace, action from the arguments). Transforms are not
// applied. Errors are the call's own (arguments that are not an object,
// path arguments that cannot be resolved, a workspace that is not
// absolute): the call could not run.
func DryRun(ctx context.Context, gates GateProvider, snap governance.PolicySnapshot, call Call, opts DryRunOptions) (DryRunResult, error) {
	call = call.withContext(opts.Context)
	args, err := call.arguments()
	if err != nil {
		return DryRunResult{}, err
	}
	workspace, err := resolveWorkspace(opts.PathFacts, opts.Workspace)
	if err != nil {
		return DryRunResult{}, err
	}
	var facts []abi.PathFact
	if opts.PathFacts != nil {
		if call.Cwd, facts, err = opts.PathFacts(call.Cwd, args.Value, args.Order, call.PathArgs); err != nil {
			return DryRunResult{}, err
		}
	}
	res := DryRunResult{Gates: []DryRunGate{}}
	for _, b := range snap.GateBindings() {
		if !opts.EveryTool && !b.AppliesTo(call.Tool) {
			continue
		}
		in := NewGateInput(call, args, facts, b.GateID(), abi.PhaseCheck)
		in.Workspace = workspace
		res.Gates = append(res.Gates, dryRunGate(ctx, gates, b, in))
	}
	res.combine()
	return res, nil
}

func dryRunGate(ctx context.Context, gates GateProvider, b governance.ExecutableGateBinding, in abi.GateInput) DryRunGate {
	g := DryRunGate{GateID: b.GateID(), Level: b.Level()}
	gate, err := gates.GateFor(ctx, b)
	if err == nil {
		g.Output, err = gate.Evaluate(ctx, in)
	}
	if err != nil {
		g.Err = err
		g.Output = abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: failureCode(err)}
	}
	return g
}

// failureCode is a gate failure's own reason code when the error carries
// one (ReasonCode() string, as host.GuestError has), else
// control.evaluator_error.
func failureCode(err error) string {
	var coded interface{ ReasonCode() string }
	if errors.As(err, &coded) && coded.ReasonCode() != "" {
		return coded.ReasonCode()
	}
	return ReasonEvaluatorError
}

func (r *DryRunResult) combine() {
	if len(r.Gates) == 0 {
		r.Decision, r.ReasonCode = abi.DecisionDeny, ReasonNoGateBinding
		return
	}
	rank := func(g DryRunGate) int {
		switch {
		case g.Output.Decision == abi.DecisionDeny && g.Level != governance.LevelAdvisory:
			return 2
		case g.Output.Decision == abi.DecisionRequireApproval:
			return 1
		}
		return 0
	}
	best := -1
	for _, g := range r.Gates {
		if k := rank(g); k > best {
			best = k
			r.ReasonCode, r.Message, r.MatchedRule = g.Output.ReasonCode, g.Output.Message, g.Output.MatchedRule
		}
	}
	r.Decision = [...]abi.Decision{abi.DecisionAllow, abi.DecisionRequireApproval, abi.DecisionDeny}[best]
}
