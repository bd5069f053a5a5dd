package gatetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
)

// SmokeInputs are the requests Check evaluates (`govhost plugin check`):
// any verdict is fine, a guest failure is not.
var SmokeInputs = []abi.GateInput{
	{GateID: "smoke", Phase: abi.PhaseCheck, Tool: "bash", Operation: "execute",
		Arguments: json.RawMessage(`{"command":"ls -la"}`), ArgumentOrder: []string{"command"}, Cwd: "/work",
		Context: abi.OperationInfo{OperationID: "op-smoke-1", Actor: &abi.ActorRef{Kind: "user", ID: "smoke"}, RunID: "run-smoke", AgentName: "smoke", ToolCallID: "call-1"}},
	{GateID: "smoke", Phase: abi.PhaseCheck, Tool: "read", Operation: "read",
		Arguments: json.RawMessage(`{"path":"notes/a.txt"}`), ArgumentOrder: []string{"path"}, Cwd: "/work",
		Paths:   []abi.PathFact{{Arg: "path", Raw: "notes/a.txt", Resolved: "/work/notes/a.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: "/work/notes/a.txt"}},
		Context: abi.OperationInfo{OperationID: "op-smoke-2", Metadata: map[string]string{"smoke": "true"}}},
	{GateID: "smoke", Phase: abi.PhaseRecheck, Tool: "write", Operation: "write",
		Arguments: json.RawMessage(`{"content":"x","path":"../outside"}`), ArgumentOrder: []string{"path", "content"}, Cwd: "/work",
		Paths: []abi.PathFact{{Arg: "path", Raw: "../outside", Resolved: "/outside", Exists: false, Kind: abi.PathKindMissing, NearestExisting: "/"}}},
}

// CheckReport is what Check found about a module; `govhost plugin check
// --json` prints it.
type CheckReport struct {
	File        string           `json:"file"`
	SHA256      string           `json:"sha256,omitempty"`
	Size        int              `json:"size"`
	Kind        string           `json:"abi_kind,omitempty"`
	ABIVersion  int              `json:"abi_version,omitempty"`
	Exports     []string         `json:"exports,omitempty"`
	Description *abi.Description `json:"description,omitempty"`
	Smoke       []SmokeResult    `json:"smoke,omitempty"`
	Valid       bool             `json:"valid"`
	Error       string           `json:"error,omitempty"`
	ReasonCode  string           `json:"reason_code,omitempty"`
}

// SmokeResult is one smoke input's verdict and how long it took.
type SmokeResult struct {
	Tool       string `json:"tool"`
	Decision   string `json:"decision"`
	ReasonCode string `json:"reason_code"`
	Micros     int64  `json:"micros"`
}

// Check loads a module on a host of cfg (expected is its sha256, or
// host.AnyDigest to trust the bytes), configures it with config, asks for
// its description and evaluates SmokeInputs. Every failure is in the
// report (Valid false, Error, and ReasonCode when the guest failed); path
// only names the file in the report.
func Check(ctx context.Context, cfg host.Config, path string, wasm []byte, expected string, config []byte) CheckReport {
	rep := CheckReport{File: path, Size: len(wasm)}
	fail := func(err error) CheckReport {
		rep.Error = err.Error()
		var ge *host.GuestError
		if errors.As(err, &ge) {
			rep.ReasonCode = ge.Code
		}
		return rep
	}
	h, err := host.New(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	defer h.Close(ctx)

	m, err := h.Load(ctx, wasm, expected)
	var mismatch *host.DigestMismatchError
	if errors.As(err, &mismatch) {
		rep.SHA256 = mismatch.Actual
	}
	if err != nil {
		return fail(err)
	}
	rep.SHA256, rep.Kind, rep.Exports = m.Digest(), string(m.Kind()), m.Exports()
	g, err := h.Gate(ctx, m, config)
	if err != nil {
		return fail(err)
	}
	rep.ABIVersion = abi.Version
	if d, ok, err := g.Describe(ctx); err != nil {
		return fail(err)
	} else if ok {
		rep.Description = &d
	}
	for _, in := range SmokeInputs {
		start := time.Now()
		out, err := g.Evaluate(ctx, in)
		if err != nil {
			return fail(fmt.Errorf("smoke input %s: %w", in.Tool, err))
		}
		rep.Smoke = append(rep.Smoke, SmokeResult{Tool: in.Tool, Decision: string(out.Decision), ReasonCode: out.ReasonCode, Micros: time.Since(start).Microseconds()})
	}
	rep.Valid = true
	return rep
}

// WriteText writes the report for a terminal, one fact a line; every
// string that came from the guest goes through abi.DisplayText.
func (r CheckReport) WriteText(w io.Writer) error {
	bw := &errWriter{w: w}
	bw.printf("file:     %s (%d bytes)\n", r.File, r.Size)
	if r.SHA256 != "" {
		bw.printf("sha256:   %s\n", r.SHA256)
	}
	if r.Kind != "" {
		abiText := r.Kind
		if r.ABIVersion != 0 {
			abiText = fmt.Sprintf("%s, version %d", r.Kind, r.ABIVersion)
		}
		bw.printf("abi:      %s\n", abiText)
		exports := make([]string, len(r.Exports))
		for i, e := range r.Exports {
			exports[i] = abi.DisplayText(e) // export names are the guest's
		}
		bw.printf("exports:  %s\n", strings.Join(exports, ", "))
	}
	if d := r.Description; d != nil {
		// The description is guest text: escaped, it cannot clear the
		// terminal or forge a "result:" line.
		bw.printf("gate:     %s %s: %s\n", abi.DisplayText(d.Name), abi.DisplayText(d.Version), abi.DisplayText(d.Summary))
	}
	for _, s := range r.Smoke {
		bw.printf("smoke:    %-6s -> %s %s (%d µs)\n", s.Tool, s.Decision, s.ReasonCode, s.Micros)
	}
	if r.Valid {
		bw.printf("result:   valid gate\n")
		return bw.err
	}
	bw.printf("result:   NOT a valid gate: %s\n", r.Error)
	return bw.err
}

// WriteJSON writes the report as one indented JSON document.
func (r CheckReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
