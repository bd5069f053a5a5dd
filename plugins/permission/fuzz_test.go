package permission_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/permission"
)

// FuzzNew: any configuration either builds a gate or fails with a
// *ConfigError; a built gate answers a valid decision.
func FuzzNew(f *testing.F) {
	for _, s := range []string{
		`{"preset":"safe"}`, `{"lionagi":{"mode":"rules","allow":{"bash":["git *"],"BASH":["[!a-"]}}}`,
		`{"agentlane":{"grants":"read, write:create_file","known_tools":{"x":["network_access"]},"side_effect_approval":{"grants_downgrade":true}}}`,
		`{"agentlane":{"side_effect_approval":true,"whole_tool_grants":"any_operation","grants":"bash"}}`,
	} {
		f.Add([]byte(s))
	}
	in := abi.GateInput{Tool: "bash", Action: "run", Operation: "execute_command", Arguments: json.RawMessage(`{"command":"ls -la","path":"/w"}`)}
	f.Fuzz(func(t *testing.T, config []byte) {
		g, err := permission.New(config)
		if err != nil {
			var ce *permission.ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, permission.ErrConfig) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		if out := g.Evaluate(in); !out.Decision.Valid() || out.ReasonCode == "" {
			t.Fatalf("invalid output %+v", out)
		}
	})
}

// FuzzGate_Evaluate: any request gets a valid decision with a reason code,
// and a model-facing message exactly when it is not allowed.
func FuzzGate_Evaluate(f *testing.F) {
	gates := []*permission.Gate{}
	for _, c := range []string{
		`{"preset":"safe"}`, `{"preset":"deny_all"}`,
		`{"lionagi":{"mode":"rules","deny":{"*":["*secret*"]},"allow":{"editor":["/w/*"],"*":["get *"]},"escalate":{"*":["*"]}}}`,
		`{"agentlane":{"grants":"read, write, bash:execute_command","side_effect_approval":{}}}`,
	} {
		g, err := permission.New([]byte(c))
		if err != nil {
			f.Fatal(err)
		}
		gates = append(gates, g)
	}
	f.Add("bash", "run", "", []byte(`{"command":"ls; rm"}`))
	f.Add("editor", "write", "", []byte(`{"file_path":5}`))
	f.Add("write", "", "create_file", []byte(`{"path":"/w/x"}`))
	f.Add("search", "grep", "", []byte(`{"pattern":[1],"path":{"a":1}}`))
	f.Fuzz(func(t *testing.T, tool, action, operation string, args []byte) {
		in := abi.GateInput{Tool: tool, Action: action, Operation: operation, Arguments: args}
		for _, g := range gates {
			out := g.Evaluate(in)
			if !out.Decision.Valid() || out.ReasonCode == "" {
				t.Fatalf("invalid output %+v", out)
			}
			if (out.Decision == abi.DecisionAllow) != (out.Message == "") {
				t.Fatalf("message %q with decision %s", out.Message, out.Decision)
			}
		}
	})
}

// TestGate_Evaluate_NoStateBetweenCalls: the gate reuses buffers from call
// to call (decoded arguments); a verdict must not depend on the calls
// before it. Each of a run of different requests gets the same verdict when
// the run is replayed in reverse order on another gate.
func TestGate_Evaluate_NoStateBetweenCalls(t *testing.T) {
	const config = `{"lionagi":{"mode":"rules","deny":{"*":["*secret*"],"bash":["rm *"]},"allow":{"bash":["ls *"],"editor":["/w/*"],"*":["get *"]},"escalate":{"*":["*"]}}}`
	tools := []string{"bash", "BASH_TOOL", "editor", "reader", "search", "web_fetch", "*"}
	values := []string{`"ls -la src"`, `"rm -rf x"`, `"/w/a"`, `"my-secret"`, `"get https://x"`, `5`, `null`, `[1,{"a":"b"}]`, `{"k":"v"}`, `"a; b"`}
	keys := []string{"command", "file_path", "path", "pattern", "url", "command"}
	rng := rand.New(rand.NewPCG(5, 6))
	var ins []abi.GateInput
	for range 3000 {
		var b strings.Builder
		b.WriteByte('{')
		for n := rng.IntN(4); n > 0; n-- {
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + keys[rng.IntN(len(keys))] + `":` + values[rng.IntN(len(values))])
		}
		b.WriteByte('}')
		ins = append(ins, abi.GateInput{Tool: tools[rng.IntN(len(tools))], Action: "get", Arguments: []byte(b.String())})
	}
	forward, err := permission.New([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	backward, err := permission.New([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]abi.GateOutput, len(ins))
	for i, in := range ins {
		outs[i] = forward.Evaluate(in)
	}
	for i := len(ins) - 1; i >= 0; i-- {
		if got := backward.Evaluate(ins[i]); !reflect.DeepEqual(got, outs[i]) {
			t.Fatalf("%s %s: %+v in one order, %+v in the other", ins[i].Tool, ins[i].Arguments, outs[i], got)
		}
	}
}
