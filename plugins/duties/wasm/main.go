// Command wasm is the built-in separation-of-duties gate as a Wasm module:
// the logic of package duties behind gate ABI v1. `make plugins` builds it
// into plugins/builtin/duties.wasm; the configuration is duties.Config,
// handed to duties.New once per instance.
package main

import (
	"encoding/json"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/duties"
	"github.com/govhost/govhost/sdk"
)

func init() {
	sdk.Describe(abi.Description{
		Name:    "duties",
		Version: "1.0.0",
		Summary: "separation of duties: denies an actor a duty incompatible with one it performed earlier in the task (host-supplied history; no authentication claim)",
	})
	sdk.RegisterFactory(func(config json.RawMessage) (sdk.Func, error) {
		g, err := duties.New(config)
		if err != nil {
			return nil, err
		}
		return g.Evaluate, nil
	})
}

// main is never run in a -buildmode=c-shared module.
func main() {}
