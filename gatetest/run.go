package gatetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/sdk/gatecases"
)

// Options tune Run.
type Options struct {
	// Config is the configuration of cases that give none; when empty, the
	// file's configuration is used (and when that is empty too, {}).
	Config json.RawMessage
	// GateID is the gate_id sent to the gate when a case's input has none;
	// default: the file's gate, else "test".
	GateID string
}

// Verdict is the part of a GateOutput a case checks.
type Verdict struct {
	Decision    abi.Decision `json:"decision"`
	ReasonCode  string       `json:"reason_code"`
	Message     string       `json:"message,omitempty"`
	Detail      string       `json:"detail,omitempty"`
	MatchedRule string       `json:"matched_rule,omitempty"`
	DenyMessage string       `json:"deny_message,omitempty"`
	// Arguments are replacement arguments (transform gates); not compared.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// CaseResult is the outcome of one case. Error is the host's description of
// a guest failure (host-written; it never contains guest text).
type CaseResult struct {
	Name  string                 `json:"name"`
	Pass  bool                   `json:"pass"`
	Got   Verdict                `json:"got"`
	Diff  []gatecases.Difference `json:"diff,omitempty"`
	Error string                 `json:"error,omitempty"`
}

// Report is the outcome of a cases file against one module.
type Report struct {
	File   string       `json:"file,omitempty"`
	Module string       `json:"module,omitempty"`
	SHA256 string       `json:"sha256"`
	Passed int          `json:"passed"`
	Failed int          `json:"failed"`
	Cases  []CaseResult `json:"cases"`
}

// OK reports whether every case passed.
func (r Report) OK() bool { return r.Failed == 0 && len(r.Cases) > 0 }

// Run evaluates every case of f through module m (loaded by h) and compares
// each verdict with the case's expectation. A configuration the gate refuses,
// or a guest that fails, is not an error of Run: the case gets the deny the
// host stands in with (host.DenyFor) and is compared like any verdict. Run
// returns an error only when ctx ends or the host is closed.
func Run(ctx context.Context, h *host.Host, m *host.Module, f gatecases.File, opts Options) (Report, error) {
	rep := Report{SHA256: m.Digest(), Cases: make([]CaseResult, 0, len(f.Cases))}
	defaultConfig := opts.Config
	if len(bytes.TrimSpace(defaultConfig)) == 0 {
		defaultConfig = f.Config
	}
	gateID := opts.GateID
	if gateID == "" {
		gateID = f.Gate
	}
	if gateID == "" {
		gateID = "test"
	}
	for _, c := range f.Cases {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		res, err := runCase(ctx, h, m, c, defaultConfig, gateID)
		if err != nil {
			return rep, err
		}
		if res.Pass {
			rep.Passed++
		} else {
			rep.Failed++
		}
		rep.Cases = append(rep.Cases, res)
	}
	return rep, nil
}

func runCase(ctx context.Context, h *host.Host, m *host.Module, c gatecases.Case, defaultConfig json.RawMessage, gateID string) (CaseResult, error) {
	config := c.Config
	if len(bytes.TrimSpace(config)) == 0 {
		config = defaultConfig
	}
	res := CaseResult{Name: c.Name}
	var out abi.GateOutput
	gate, err := h.Gate(ctx, m, config)
	if err == nil {
		out, err = gate.Evaluate(ctx, gatecases.Input(c, gateID))
	} else {
		out = host.DenyFor(err)
	}
	if errors.Is(err, host.ErrClosed) || (err != nil && ctx.Err() != nil) {
		return res, err
	}
	if err != nil {
		res.Error = err.Error()
	}
	res.Got = Verdict{Decision: out.Decision, ReasonCode: out.ReasonCode, Message: out.Message, Detail: out.Detail, MatchedRule: out.MatchedRule, DenyMessage: out.DenyMessage, Arguments: out.Arguments}
	res.Diff = gatecases.Compare(c.Want, out)
	res.Pass = len(res.Diff) == 0
	return res, nil
}
