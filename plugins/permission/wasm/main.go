// Command wasm is the built-in permission gate as a Wasm module: the logic
// of package permission behind gate ABI v1. `make plugins` builds it into
// plugins/builtin/permission.wasm; the configuration is the JSON described
// in ../README.md, handed to permission.New once per instance.
package main

import (
	"encoding/json"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/permission"
	"github.com/govhost/govhost/sdk"
)

func init() {
	sdk.Describe(abi.Description{
		Name:    "permission",
		Version: "1.0.0",
		Summary: "LionAGI PermissionPolicy and AgentLane grant and side-effect approval policies",
	})
	sdk.RegisterFactory(func(config json.RawMessage) (sdk.Func, error) {
		g, err := permission.New(config)
		if err != nil {
			return nil, err
		}
		return g.Evaluate, nil
	})
}

// main is never run in a -buildmode=c-shared module.
func main() {}
