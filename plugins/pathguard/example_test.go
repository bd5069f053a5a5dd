package pathguard_test

import (
	"fmt"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/pathguard"
)

func Example() {
	g, err := pathguard.New([]byte(`{"kind": "workspace", "root": "/workspace/app"}`))
	if err != nil {
		panic(err)
	}
	out := g.Evaluate(abi.GateInput{
		Tool: "read", Operation: "read_file", Cwd: "/workspace/app",
		Arguments: []byte(`{"path":"../private.txt"}`),
		Paths: []abi.PathFact{{Arg: "path", Raw: "../private.txt", Resolved: "/workspace/private.txt",
			Exists: true, Kind: abi.PathKindFile, NearestExisting: "/workspace/private.txt"}},
	})
	fmt.Println(out.Decision, out.ReasonCode)
	fmt.Println(out.Message)
	// Output:
	// deny path.outside_root
	// permission denied: read is not allowed for `/workspace/private.txt`
}
