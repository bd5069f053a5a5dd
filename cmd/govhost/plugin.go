package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
)

// smokeInputs are the built-in requests `plugin check` evaluates: any
// verdict is fine, a guest failure is not.
var smokeInputs = []abi.GateInput{
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

// pluginReport is what `plugin check --json` prints.
type pluginReport struct {
	File        string           `json:"file"`
	SHA256      string           `json:"sha256,omitempty"`
	Size        int              `json:"size"`
	Kind        string           `json:"abi_kind,omitempty"`
	ABIVersion  int              `json:"abi_version,omitempty"`
	Exports     []string         `json:"exports,omitempty"`
	Description *abi.Description `json:"description,omitempty"`
	Smoke       []smokeResult    `json:"smoke,omitempty"`
	Valid       bool             `json:"valid"`
	Error       string           `json:"error,omitempty"`
	ReasonCode  string           `json:"reason_code,omitempty"`
}

type smokeResult struct {
	Tool       string `json:"tool"`
	Decision   string `json:"decision"`
	ReasonCode string `json:"reason_code"`
	Micros     int64  `json:"micros"`
}

// newPluginCheckCmd is `govhost plugin check FILE.wasm`: it loads the
// module, reports its ABI kind and version, exports and sha256, evaluates
// the built-in smoke inputs, and exits 0 for a valid gate, 1 for an invalid
// one, 2 on a usage error or an unreadable file.
func newPluginCheckCmd() *cobra.Command {
	var digest, config, cacheDir string
	var asJSON bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "check [--sha256 HEX] [--config JSON] [--json] FILE.wasm",
		Short: "Load a gate module, report its ABI, exports and digest, run smoke inputs",
		Args:  exactArgs("FILE.wasm"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			wasm, err := os.ReadFile(path)
			if err != nil {
				return usageError(err)
			}
			if config != "" && !json.Valid([]byte(config)) {
				return usageErrorf("--config is not valid JSON")
			}
			expected := host.AnyDigest
			if digest != "" {
				expected = digest
			}
			cfg := host.NewConfig().WithCallTimeout(timeout).WithPoolSize(1).WithCompilationCacheDir(cacheDir)
			rep := checkPlugin(cmd.Context(), cfg, path, wasm, expected, []byte(config))
			if asJSON {
				b, _ := json.MarshalIndent(rep, "", "  ")
				fmt.Fprintln(cmd.OutOrStdout(), string(b))
			} else {
				printPluginReport(cmd.OutOrStdout(), rep)
			}
			if !rep.Valid {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&digest, "sha256", "", "expected sha256 of the module (hex); default: trust the file")
	f.StringVar(&config, "config", "", "configuration JSON passed to gate_configure")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.DurationVar(&timeout, "timeout", time.Second, "deadline of each guest call")
	f.StringVar(&cacheDir, "cache-dir", defaultCacheDir(), "compilation cache directory (empty: none)")
	return c
}

func checkPlugin(ctx context.Context, cfg host.Config, path string, wasm []byte, expected string, config []byte) pluginReport {
	rep := pluginReport{File: path, Size: len(wasm)}
	fail := func(err error) pluginReport {
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
	for _, in := range smokeInputs {
		start := time.Now()
		out, err := g.Evaluate(ctx, in)
		if err != nil {
			return fail(fmt.Errorf("smoke input %s: %w", in.Tool, err))
		}
		rep.Smoke = append(rep.Smoke, smokeResult{Tool: in.Tool, Decision: string(out.Decision), ReasonCode: out.ReasonCode, Micros: time.Since(start).Microseconds()})
	}
	rep.Valid = true
	return rep
}

func printPluginReport(w io.Writer, r pluginReport) {
	fmt.Fprintf(w, "file:     %s (%d bytes)\n", r.File, r.Size)
	if r.SHA256 != "" {
		fmt.Fprintf(w, "sha256:   %s\n", r.SHA256)
	}
	if r.Kind != "" {
		abiText := r.Kind
		if r.ABIVersion != 0 {
			abiText = fmt.Sprintf("%s, version %d", r.Kind, r.ABIVersion)
		}
		fmt.Fprintf(w, "abi:      %s\n", abiText)
		exports := make([]string, len(r.Exports))
		for i, e := range r.Exports {
			exports[i] = abi.DisplayText(e) // export names are the guest's
		}
		fmt.Fprintf(w, "exports:  %s\n", strings.Join(exports, ", "))
	}
	if d := r.Description; d != nil {
		// The description is guest text: escaped, it cannot clear the
		// terminal or forge a "result:" line.
		fmt.Fprintf(w, "gate:     %s %s: %s\n", abi.DisplayText(d.Name), abi.DisplayText(d.Version), abi.DisplayText(d.Summary))
	}
	for _, s := range r.Smoke {
		fmt.Fprintf(w, "smoke:    %-6s -> %s %s (%d µs)\n", s.Tool, s.Decision, s.ReasonCode, s.Micros)
	}
	if r.Valid {
		fmt.Fprintln(w, "result:   valid gate")
		return
	}
	fmt.Fprintf(w, "result:   NOT a valid gate: %s\n", r.Error)
}
