package permission_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/permission"
)

func ExampleGate_Evaluate() {
	show := func(config string, inputs ...string) {
		g, err := permission.New([]byte(config))
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, raw := range inputs {
			var in abi.GateInput
			if err := json.Unmarshal([]byte(raw), &in); err != nil {
				fmt.Println(err)
				return
			}
			enc := json.NewEncoder(os.Stdout)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(g.Evaluate(in))
		}
	}
	show(`{"preset": "safe"}`,
		`{"tool":"bash","action":"run","arguments":{"command":"sudo rm x"}}`,
		`{"tool":"bash","action":"run","arguments":{"command":"make 2>&1"}}`,
		`{"tool":"bash","action":"run","arguments":{"command":"cargo build"}}`,
		`{"tool":"editor","action":"write","arguments":{"file_path":"/w/a.py"}}`)
	show(`{"agentlane": {"grants": "read, write:create_file", "side_effect_approval": {}}}`,
		`{"tool":"read","operation":"read_file","arguments":{"path":"/w/a"}}`,
		`{"tool":"write","operation":"create_file","arguments":{"path":"/w/notes.txt"}}`,
		`{"tool":"bash","operation":"execute_command","arguments":{"command":"ls"}}`)
	// Output:
	// {"decision":"deny","reason_code":"permission.denied_by_rule","detail":"denied by rule: sudo *","message":"permission denied: bash is not allowed for this command","matched_rule":"sudo *"}
	// {"decision":"deny","reason_code":"permission.shell_control","detail":"Shell control operator requires explicit approval: 'make 2>&1'","message":"permission denied: bash is not allowed for this command"}
	// {"decision":"require_approval","reason_code":"permission.escalate","detail":"escalate by rule: *","message":"approval required: bash command requires application approval before execution","matched_rule":"*","deny_message":"permission denied: bash is not allowed for this command"}
	// {"decision":"allow","reason_code":"permission.allowed_by_rule","detail":"allowed by rule: *","matched_rule":"*"}
	// {"decision":"allow","reason_code":"permission.granted","detail":"granted by read","matched_rule":"read"}
	// {"decision":"require_approval","reason_code":"permission.side_effect_approval","detail":"create_file is a side effect that requires approval","message":"approval required: write requires application approval for `/w/notes.txt` before execution","deny_message":"permission denied: write is not allowed for `/w/notes.txt`"}
	// {"decision":"deny","reason_code":"permission.not_granted","detail":"no grant allows bash:execute_command","message":"permission denied: bash is not allowed for this command"}
}
