// Command extismgate is a govhost gate written with the Extism Go PDK
// (github.com/extism/go-pdk v1.1.3), exactly as an Extism author would write
// it: it knows nothing of govhost's packages. The host detects it by its
// extism:host/env imports and runs it through Extism's Go SDK.
//
// Configuration: {"mode": "full" | "trivial", "deny_tools": [...]}
//
//	full     decode the GateInput JSON; deny tools in deny_tools; the tools
//	         "loop", "membomb", "panic", "http" and "probe" misbehave (see
//	         evaluate) so the same limits can be proven on Extism
//	trivial  the benchmark's trivial logic, on raw bytes: deny when the input
//	         names the tool "web_fetch" (same as testdata/go/trivial)
//
// Built by `make fixtures` (its own module, so the PDK stays out of govhost's
// go.mod):
//
//	cd testdata/extism && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared \
//		-trimpath -ldflags=-buildid= -o ../../internal/wasmfixtures/wasm/extism_gate.wasm .
package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"time"

	"github.com/extism/go-pdk"
)

type config struct {
	Mode      string   `json:"mode"`
	DenyTools []string `json:"deny_tools"`
}

type gateInput struct {
	ABIVersion int    `json:"abi_version"`
	Tool       string `json:"tool"`
}

type gateOutput struct {
	Decision   string `json:"decision"`
	ReasonCode string `json:"reason_code"`
	Detail     string `json:"detail,omitempty"`
}

var (
	cfg  = config{Mode: "full"}
	sink [][]byte

	trivialNeedle = []byte(`"tool":"web_fetch"`)
	trivialDeny   = []byte(`{"decision":"deny","reason_code":"trivial.denied"}`)
	trivialAllow  = []byte(`{"decision":"allow","reason_code":"trivial.allowed"}`)
)

//go:wasmexport gate_configure
func gateConfigure() int32 {
	if err := json.Unmarshal(pdk.Input(), &cfg); err != nil {
		return 1
	}
	if cfg.Mode == "" {
		cfg.Mode = "full"
	}
	return 0
}

//go:wasmexport gate_describe
func gateDescribe() int32 {
	pdk.OutputString(`{"name":"extismgate","version":"1.0.0","summary":"Extism go-pdk fixture"}`)
	return 0
}

//go:wasmexport gate_evaluate
func gateEvaluate() int32 {
	input := pdk.Input()
	if cfg.Mode == "trivial" {
		if bytes.Contains(input, trivialNeedle) {
			pdk.Output(trivialDeny)
		} else {
			pdk.Output(trivialAllow)
		}
		return 0
	}
	var in gateInput
	if err := json.Unmarshal(input, &in); err != nil {
		pdk.SetErrorString("GUEST-TEXT bad input")
		return 1
	}
	out := gateOutput{Decision: "allow", ReasonCode: "extismgate.allowed"}
	switch {
	case slices.Contains(cfg.DenyTools, in.Tool):
		out = gateOutput{Decision: "deny", ReasonCode: "extismgate.tool_denied"}
	case in.Tool == "loop":
		for {
		}
	case in.Tool == "membomb":
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	case in.Tool == "panic":
		panic("GUEST-TEXT: hostile panic")
	case in.Tool == "fail":
		pdk.SetErrorString("GUEST-TEXT: declared failure")
		return 1
	case in.Tool == "http":
		// No allowed hosts: the host function refuses and the call fails.
		pdk.NewHTTPRequest(pdk.MethodGet, "http://127.0.0.1:9/").Send()
	case in.Tool == "probe":
		_, ferr := os.Open("/etc/passwd")
		probe, _ := json.Marshal(map[string]any{
			"open_failed": ferr != nil,
			"environ":     os.Environ(),
			"unix_nano":   time.Now().UnixNano(),
		})
		out.Detail = string(probe)
	}
	b, _ := json.Marshal(out)
	pdk.Output(b)
	return 0
}

func main() {}
