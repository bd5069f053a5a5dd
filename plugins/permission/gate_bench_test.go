package permission_test

import (
	"encoding/json"
	"testing"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/internal/gatetable"
	"github.com/govhost/govhost/plugins/permission"
)

func BenchmarkGate_Evaluate(b *testing.B) {
	benches := []struct {
		name   string
		config string
		in     abi.GateInput
	}{
		{"config=allow_all", `{"preset":"allow_all"}`,
			abi.GateInput{Tool: "bash", Action: "run", Arguments: json.RawMessage(`{"command":"ls -la"}`)}},
		{"config=safe/tool=bash/decision=escalate", `{"preset":"safe"}`,
			abi.GateInput{Tool: "bash", Action: "run", Arguments: json.RawMessage(`{"command":"uv run pytest tests/ -x --maxfail=3"}`)}},
		{"config=safe/tool=bash/decision=shell_control", `{"preset":"safe"}`,
			abi.GateInput{Tool: "bash", Action: "run", Arguments: json.RawMessage(`{"command":"make test 2>&1 | tee log"}`)}},
		{"config=rules/tool=editor/decision=deny", `{"lionagi":{"mode":"rules","deny":{"editor":[".env","*.key","*secret*"]},"allow":{"editor":["/workspace/*"]}}}`,
			abi.GateInput{Tool: "editor", Action: "write", Arguments: json.RawMessage(`{"file_path":"/workspace/config/Server.KEY","content":"x"}`)}},
		{"config=rules/tool=other/decision=allow", `{"lionagi":{"mode":"rules","deny":{"*":["*password*"]},"allow":{"web_fetch":["get https://docs.*"]}}}`,
			abi.GateInput{Tool: "web_fetch", Action: "get", Arguments: json.RawMessage(`{"timeout":30,"url":"https://docs.example.com/a/b"}`),
				ArgumentOrder: []string{"url", "timeout"}}},
		{"config=agentlane/decision=approval", `{"agentlane":{"grants":"read, find, grep, write:create_file, patch:modify_file, bash:execute_command","side_effect_approval":{}}}`,
			abi.GateInput{Tool: "write", Operation: "create_file", Arguments: json.RawMessage(`{"content":"hello","path":"/workspace/notes.txt"}`),
				Paths: []abi.PathFact{{Arg: "path", Raw: "notes.txt", Resolved: "/workspace/notes.txt", Kind: abi.PathKindMissing, NearestExisting: "/workspace"}}}},
		{"config=agentlane/decision=deny", `{"agentlane":{"grants":"read, find"}}`,
			abi.GateInput{Tool: "bash", Operation: "execute_command", Arguments: json.RawMessage(`{"command":"rm -rf /tmp/x"}`)}},
	}
	for _, bb := range benches {
		g, err := permission.New([]byte(bb.config))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("abi=native/"+bb.name, func(b *testing.B) {
			b.ReportAllocs()
			var out abi.GateOutput
			for b.Loop() {
				out = g.Evaluate(bb.in)
			}
			if !out.Decision.Valid() {
				b.Fatal(out)
			}
		})
	}
}

// BenchmarkGate_GuestPath is one gate_evaluate call of the built-in module,
// natively, on the input and configuration BenchmarkBuiltinGate
// (repository root) measures through Wasm.
func BenchmarkGate_GuestPath(b *testing.B) {
	g, err := permission.New([]byte(`{"lionagi": {"mode": "rules", "allow": {"bash": ["ls *"]}}}`))
	if err != nil {
		b.Fatal(err)
	}
	gatetable.BenchGuestPath(b, `{"abi_version":1,"gate_id":"permission","phase":"check","tool":"bash","operation":"execute_command","arguments":{"command":"ls -la src"},"argument_order":["command"],"cwd":"/tmp/x","context":{}}`, g.Evaluate)
}
