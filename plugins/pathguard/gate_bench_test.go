package pathguard_test

import (
	"testing"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/internal/gatetable"
	"github.com/govhost/govhost/plugins/pathguard"
)

func BenchmarkGate_Evaluate(b *testing.B) {
	inside := []abi.PathFact{{Arg: "path", Raw: "src/pkg/file.go", Resolved: "/home/dev/project/src/pkg/file.go", Exists: true, Kind: abi.PathKindFile, NearestExisting: "/home/dev/project/src/pkg/file.go"}}
	outside := []abi.PathFact{{Arg: "path", Raw: "../../../etc/passwd", Resolved: "/etc/passwd", Exists: true, Kind: abi.PathKindFile, NearestExisting: "/etc/passwd"}}
	args := []byte(`{"path":"src/pkg/file.go"}`)
	cases := []struct {
		name, cfg, tool, op string
		paths               []abi.PathFact
	}{
		{"kind=guard_paths/case=allow", `{"kind":"guard_paths","allowed_paths":["/home/dev/project"],"denied_paths":[".env","*.key","/home/dev/project/secrets"]}`, "reader", "", inside},
		{"kind=guard_paths/case=deny", `{"kind":"guard_paths","allowed_paths":["/home/dev/project"],"denied_paths":[".env","*.key"]}`, "reader", "", outside},
		{"kind=workspace/case=allow", `{"kind":"workspace","root":"/home/dev/project"}`, "read", "read_file", inside},
		{"kind=workspace/case=deny", `{"kind":"workspace","root":"/home/dev/project"}`, "read", "read_file", outside},
		{"kind=path_scope/case=allow", `{"kind":"path_scope","paths":["/home/dev/other","/home/dev/brief.md","/home/dev/project"]}`, "read", "", inside},
		// The reference for these two is kind=workspace/case=allow above.
		{"kind=workspace/root=$workspace/case=allow", `{"kind":"workspace","root":"$workspace"}`, "read", "read_file", inside},
		{"kind=virtual/case=allow", `{"kind":"virtual","mounts":[{"name":"tenant"}],"roots":["/tenant/sessions/s-1"],"cwd":"/tenant/sessions/s-1"}`, "read", "read_file", nil},
	}
	for _, c := range cases {
		g, err := pathguard.New([]byte(c.cfg))
		if err != nil {
			b.Fatal(err)
		}
		in := abi.GateInput{ABIVersion: 1, Tool: c.tool, Operation: c.op, Arguments: args, Cwd: "/home/dev/project", Workspace: "/home/dev/project", Paths: c.paths}
		b.Run("abi=native/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = g.Evaluate(in)
			}
		})
	}
}

// BenchmarkGate_GuestPath is one gate_evaluate call of the built-in module,
// natively, on the input and configuration BenchmarkBuiltinGate
// (repository root) measures through Wasm.
func BenchmarkGate_GuestPath(b *testing.B) {
	g, err := pathguard.New([]byte(`{"kind": "guard_paths", "allowed_paths": ["/tmp/x"]}`))
	if err != nil {
		b.Fatal(err)
	}
	gatetable.BenchGuestPath(b, `{"abi_version":1,"gate_id":"pathguard","phase":"check","tool":"bash","operation":"execute_command","arguments":{"command":"ls -la src"},"argument_order":["command"],"cwd":"/tmp/x","context":{}}`, g.Evaluate)
}
