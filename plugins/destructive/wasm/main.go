// Command wasm is the built-in destructive-command gate as a Wasm module: the logic
// of package destructive behind gate ABI v1. `make plugins` builds it into
// plugins/builtin/destructive.wasm; the configuration is the JSON described
// in ../README.md, handed to destructive.New once per instance.
package main

import (
	"encoding/json"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/destructive"
	"github.com/govhost/govhost/sdk"
)

func init() {
	sdk.Describe(abi.Description{
		Name:    "destructive",
		Version: "1.0.0",
		Summary: "guard_destructive: denies recursive force deletes, force pushes, hard resets, SQL drops, mkfs, dd and block-device writes",
	})
	sdk.RegisterFactory(func(config json.RawMessage) (sdk.Func, error) {
		g, err := destructive.New(config)
		if err != nil {
			return nil, err
		}
		return g.Evaluate, nil
	})
}

// main is never run in a -buildmode=c-shared module.
func main() {}
