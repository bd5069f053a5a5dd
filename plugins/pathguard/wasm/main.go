// Command wasm is the built-in path guard gate as a Wasm module: the logic
// of package pathguard behind gate ABI v1. `make plugins` builds it into
// plugins/builtin/pathguard.wasm; the configuration is the JSON described
// in ../README.md, handed to pathguard.New once per instance.
package main

import (
	"encoding/json"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/pathguard"
	"github.com/govhost/govhost/sdk"
)

func init() {
	sdk.Describe(abi.Description{
		Name:    "pathguard",
		Version: "1.0.0",
		Summary: "guard_paths and AgentLane workspace / path-scope policies, decided on the host's path facts",
	})
	sdk.RegisterFactory(func(config json.RawMessage) (sdk.Func, error) {
		g, err := pathguard.New(config)
		if err != nil {
			return nil, err
		}
		return g.Evaluate, nil
	})
}

// main is never run in a -buildmode=c-shared module.
func main() {}
