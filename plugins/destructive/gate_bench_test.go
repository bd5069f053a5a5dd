package destructive_test

import (
	"encoding/json"
	"testing"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/destructive"
	"github.com/govhost/govhost/plugins/internal/gatetable"
)

func BenchmarkGate_Evaluate(b *testing.B) {
	cmds := []struct{ name, cmd string }{
		{"allow_short", "git status"},
		{"allow_typical", "cd /workspace/project && npm ci && npm run build -- --mode production 2>&1 | tee build.log"},
		{"deny_rm", "rm -rf /tmp/project"},
		{"deny_git_push_late", "make test && git add -A && git commit -m 'wip: refactor the parser' && git push origin feature -f"},
		{"deny_block_device", "cat image.iso > /dev/nvme0n1"},
	}
	g, err := destructive.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cmds {
		args, _ := json.Marshal(map[string]any{"command": c.cmd, "timeout": 30})
		in := abi.GateInput{ABIVersion: 1, Tool: "bash", Phase: abi.PhaseCheck, Arguments: args}
		b.Run("abi=native/case="+c.name, func(b *testing.B) {
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
	g, err := destructive.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	gatetable.BenchGuestPath(b, `{"abi_version":1,"gate_id":"destructive","phase":"check","tool":"bash","operation":"execute_command","arguments":{"command":"ls -la src"},"argument_order":["command"],"cwd":"/tmp/x","context":{}}`, g.Evaluate)
}
