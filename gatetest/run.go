package gatetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
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
	// Arguments are replacement arguments (transform gates); not compared.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Difference is one field whose value is not the expected one.
type Difference struct {
	Field string `json:"field"`
	Want  string `json:"want"`
	Got   string `json:"got"`
}

// CaseResult is the outcome of one case. Error is the host's description of
// a guest failure (host-written; it never contains guest text).
type CaseResult struct {
	Name  string       `json:"name"`
	Pass  bool         `json:"pass"`
	Got   Verdict      `json:"got"`
	Diff  []Difference `json:"diff,omitempty"`
	Error string       `json:"error,omitempty"`
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
func Run(ctx context.Context, h *host.Host, m *host.Module, f File, opts Options) (Report, error) {
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

func runCase(ctx context.Context, h *host.Host, m *host.Module, c Case, defaultConfig json.RawMessage, gateID string) (CaseResult, error) {
	config := c.Config
	if len(bytes.TrimSpace(config)) == 0 {
		config = defaultConfig
	}
	res := CaseResult{Name: c.Name}
	var out abi.GateOutput
	gate, err := h.Gate(ctx, m, config)
	if err == nil {
		out, err = gate.Evaluate(ctx, Input(c, gateID))
	} else {
		out = host.DenyFor(err)
	}
	if errors.Is(err, host.ErrClosed) || (err != nil && ctx.Err() != nil) {
		return res, err
	}
	if err != nil {
		res.Error = err.Error()
	}
	res.Got = Verdict{Decision: out.Decision, ReasonCode: out.ReasonCode, Message: out.Message, Detail: out.Detail, MatchedRule: out.MatchedRule, Arguments: out.Arguments}
	res.Diff = Compare(c.Want, out)
	res.Pass = len(res.Diff) == 0
	return res, nil
}

// Input is the GateInput a case sends: its input with the fields a case
// may leave out filled in (gate_id, phase check, empty arguments).
func Input(c Case, gateID string) abi.GateInput {
	in := c.Input
	in.ABIVersion = abi.Version
	if in.GateID == "" {
		in.GateID = gateID
	}
	if in.Phase == "" {
		in.Phase = abi.PhaseCheck
	}
	if len(bytes.TrimSpace(in.Arguments)) == 0 || bytes.Equal(bytes.TrimSpace(in.Arguments), []byte("null")) {
		in.Arguments = json.RawMessage(`{}`)
	}
	return in
}

// Compare lists the fields of got that differ from want, in a fixed order;
// none means the case passes.
func Compare(want Want, got abi.GateOutput) []Difference {
	var diff []Difference
	add := func(field, w, g string) {
		if w != g {
			diff = append(diff, Difference{Field: field, Want: w, Got: g})
		}
	}
	add("decision", string(want.Decision), string(got.Decision))
	add("reason_code", want.ReasonCode, got.ReasonCode)
	for _, f := range []struct {
		field string
		want  *string
		got   string
	}{{"message", want.Message, got.Message}, {"detail", want.Detail, got.Detail}, {"matched_rule", want.MatchedRule, got.MatchedRule}} {
		if f.want != nil {
			add(f.field, *f.want, f.got)
		}
	}
	return diff
}
