package govhost

import (
	"context"
	"strings"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// Reason codes come from a declared vocabulary: a gate's answer carries a
// free-form reason code into every evidence record and metric, so a gate
// free to choose it could write what it saw (x.<hex of the arguments>) into
// both. A module declares its codes in gate_describe's reason_codes; the
// built-in gates' vocabularies are their namespaces, declared here (their
// code is the program's own). A code outside the vocabulary is refused:
// the gate is denied gate.bad_output.
//
// A user module never answers in a reserved namespace (reservedNamespaces:
// the host's, the controller's, the hooks' and the built-in gates'), declared
// or not, so its answer never reads in evidence as theirs.
//
// What remains (docs/gates.md, docs/operations.md): which declared code a
// gate answers is still a choice among its codes, a few bits per call; the
// model-facing message and detail are the gate's text; and a user module
// that declares no vocabulary may answer any code outside the reserved
// namespaces (its codes are bucketed in metrics).

// builtinNamespaces are the built-in gates' vocabularies: every code a
// built-in answers starts with its namespace (their case tables check it).
var builtinNamespaces = map[string]string{
	"permission":  "permission.",
	"destructive": "destructive.",
	"pathguard":   "path.",
	"duties":      "duties.",
}

// reservedNamespaces are the reason codes govhost writes itself: the
// host's gate failures, the controller's and the approval broker's
// verdicts, the hooks', and the built-in gates' namespaces. A user module
// that answers one (a spy answering gate.timeout, or
// destructive.rm_recursive_force) is denied gate.bad_output, and one it
// declares is not part of its vocabulary.
var reservedNamespaces = []string{"gate.", "control.", "policy.", "approval.", "hook.",
	"permission.", "destructive.", "path.", "duties."}

func reservedCode(code string) bool {
	for _, ns := range reservedNamespaces {
		if strings.HasPrefix(code, ns) {
			return true
		}
	}
	return false
}

// vocabulary is a gate's declared reason codes: exact codes and namespaces
// (ending in "."). nil declares nothing and checks nothing (a built-in gate
// without a namespace). A user module's vocabulary is never nil: open when
// it declares no code (any code outside the reserved namespaces).
type vocabulary struct {
	codes      map[string]bool
	namespaces []string
	user, open bool
}

func (v *vocabulary) allows(code string) bool {
	if v == nil {
		return true
	}
	if v.user && reservedCode(code) {
		return false
	}
	if v.open || v.codes[code] {
		return true
	}
	for _, ns := range v.namespaces {
		if strings.HasPrefix(code, ns) {
			return true
		}
	}
	return false
}

// vocabularyOf is the vocabulary of gate's module: a built-in's namespace,
// or the codes its gate_describe lists outside the reserved namespaces
// (open when it lists none), each recorded as declared for the metrics.
func (g *Gates) vocabularyOf(ctx context.Context, gate *host.Gate) *vocabulary {
	if b, ok := builtin.ByDigest(gate.Module().Digest()); ok {
		if ns, ok := builtinNamespaces[b.Name]; ok {
			g.declared.Store(ns, true)
			return &vocabulary{namespaces: []string{ns}}
		}
		return nil
	}
	d, ok, err := gate.Describe(ctx)
	if err != nil || !ok || len(d.ReasonCodes) == 0 {
		return &vocabulary{user: true, open: true}
	}
	v := &vocabulary{user: true, codes: make(map[string]bool, len(d.ReasonCodes))}
	for _, c := range d.ReasonCodes {
		if abi.ValidReasonCode(c) && !reservedCode(c) {
			v.codes[c] = true
			g.declared.Store(c, true)
		}
	}
	return v
}

// ReasonCodeDeclared reports whether some gate resolved so far declares
// code (the metrics label only such codes).
func (g *Gates) ReasonCodeDeclared(code string) bool {
	if _, ok := g.declared.Load(code); ok {
		return true
	}
	if i := strings.IndexByte(code, '.'); i > 0 {
		_, ok := g.declared.Load(code[:i+1])
		return ok
	}
	return false
}

// declaredGate is a gate held to its module's vocabulary.
type declaredGate struct {
	*host.Gate
	vocab *vocabulary
}

// Evaluate implements controller.Gate.
func (d *declaredGate) Evaluate(ctx context.Context, in abi.GateInput) (abi.GateOutput, error) {
	return d.EvaluateChain(ctx, "", in)
}

// EvaluateChain implements controller.ChainGate: an answer whose reason
// code the module did not declare is a gate failure, gate.bad_output.
func (d *declaredGate) EvaluateChain(ctx context.Context, chain string, in abi.GateInput) (abi.GateOutput, error) {
	out, err := d.Gate.EvaluateChain(ctx, chain, in)
	if err != nil || d.vocab.allows(out.ReasonCode) {
		return out, err
	}
	err = &host.GuestError{Code: host.CodeBadOutput, Op: "evaluate", Digest: d.Module().Digest()}
	return host.DenyFor(err), err
}
