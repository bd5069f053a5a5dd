package controller

import (
	"context"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// Gate is one configured gate ready to evaluate. host.Gate implements it.
// Evaluate returns a verdict; a non-nil error means the gate itself failed
// (trap, deadline, bad output), and the controller denies with
// control.evaluator_error whatever verdict came with it.
type Gate interface {
	Evaluate(ctx context.Context, in abi.GateInput) (abi.GateOutput, error)
}

// ChainGate is a Gate that keeps task chains apart: EvaluateChain says which
// chain a call belongs to (the operation's chain id), so that an instance
// that served another chain is reset before it serves this one.
// host.Gate implements it; the controller uses it when the gate does.
type ChainGate interface {
	Gate
	EvaluateChain(ctx context.Context, chain string, in abi.GateInput) (abi.GateOutput, error)
}

// evaluateIn asks gate for its verdict on in, as a call of chain when the
// gate keeps chains apart.
func evaluateIn(ctx context.Context, gate Gate, chain string, in abi.GateInput) (abi.GateOutput, error) {
	if cg, ok := gate.(ChainGate); ok {
		return cg.EvaluateChain(ctx, chain, in)
	}
	return gate.Evaluate(ctx, in)
}

// GateProvider returns the gate that a policy binding names: its module (by
// sha256) configured with its canonical config. It is called on every
// governed operation, so implementations cache.
type GateProvider interface {
	GateFor(ctx context.Context, b governance.ExecutableGateBinding) (Gate, error)
}

// GateProviderFunc adapts a function to GateProvider.
type GateProviderFunc func(ctx context.Context, b governance.ExecutableGateBinding) (Gate, error)

// GateFor calls f.
func (f GateProviderFunc) GateFor(ctx context.Context, b governance.ExecutableGateBinding) (Gate, error) {
	return f(ctx, b)
}

// PathResolver resolves a call's working directory and turns its path
// arguments into the facts gates decide on (DESIGN.md "Path facts"); args
// is the canonical argument object, order the caller's key order, names the
// call's Call.PathArgs (nil: the resolver's default names).
// pathfacts.ResolveCall is the host's implementation. The resolved cwd is
// what gates see: a gate compares cwd joined with a raw path against the
// resolved path.
type PathResolver func(cwd string, args map[string]any, order []string, names []string) (resolvedCwd string, facts []abi.PathFact, err error)

// Stable reason codes the controller itself produces.
const (
	ReasonEvaluatorError   = "control.evaluator_error"
	ReasonApprovalRequired = "approval.required"
	ReasonApprovalDenied   = "approval.denied"
	ReasonNoGateBinding    = "policy.no_gate_binding"
	ReasonPolicyNotFound   = "policy.not_found"
	ReasonPolicyMismatch   = "policy.digest_mismatch"
	ReasonPolicyInvalid    = "policy.invalid"
	// ReasonTooLarge denies a call whose arguments exceed
	// abi.MaxArgumentsBytes, before any gate runs.
	ReasonTooLarge = "request.too_large"
)
