// Command egress is the egress example gate in Go (examples/README.md has
// the policy; examples/egress.cases.json its shared cases). It allows
// network access only to allowlisted hosts. Build it with `make examples`,
// or:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o egress.wasm ./examples/go
//
// The logic lives in egress.go and is tested natively in egress_test.go;
// this file only registers it.
package main

import (
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk"
)

func init() {
	sdk.Describe(abi.Description{
		Name:        "egress",
		Version:     "1.0.0",
		Summary:     "network access only to allowlisted hosts",
		ReasonCodes: reasonCodes,
	})
	sdk.RegisterFactory(newGate)
}

// main is never run in a -buildmode=c-shared module.
func main() {}
