// Command toolgate is a complete example gate for govhost, written with the
// Go guest SDK. It is built into a Wasm module by `make plugins`:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath \
//		-o internal/wasmfixtures/wasm/toolgate.wasm ./examples/toolgate
//
// Configuration (all fields optional):
//
//	{
//	  "deny_tools":    ["web_fetch"],   // tools always denied
//	  "approve_tools": ["bash"],        // tools that need a human's approval
//	  "allowed_roots": ["/work"]        // every path fact must resolve under one of these
//	}
//
// The logic lives in gate.go and is tested natively in gate_test.go; this
// file only registers it.
package main

import (
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk"
)

func init() {
	sdk.Describe(abi.Description{
		Name:        "toolgate",
		Version:     "1.0.0",
		Summary:     "denies listed tools, asks approval for others, keeps paths under allowed roots",
		ReasonCodes: reasonCodes,
	})
	sdk.RegisterFactory(newGate)
}

// main is never run in a -buildmode=c-shared module; it exists because a
// main package needs one.
func main() {}
