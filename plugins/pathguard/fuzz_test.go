package pathguard_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/pathguard"
)

// FuzzEvaluate feeds arbitrary facts to each kind: the gate must not panic,
// must answer allow or deny only, and must deny any allowed path that is not
// absolute and clean.
func FuzzEvaluate(f *testing.F) {
	f.Add("path", "notes.txt", "/ws/notes.txt", "/ws", true, "read", "read_file", "/ws")
	f.Add("file_path", "../x", "/x", "/", false, "write", "", "/ws/sub")
	f.Add("path", "~/a", "/home/u/a", "/home/u", true, "grep", "", "")
	f.Add("path", "", "", "", false, "bash", "execute_command", "/")
	f.Add("path", "a/../..", "/ws/../x", "/ws", false, "find", "search_files", "relative")
	gates := make([]*pathguard.Gate, 0, 4)
	for _, cfg := range []string{
		`{"kind":"guard_paths","allowed_paths":["/ws","/b"],"denied_paths":["*.key","?","/ws/secret",".env","[!a-z]x",""],"home":"/home/u"}`,
		`{"kind":"guard_paths","denied_paths":["x*"]}`,
		`{"kind":"workspace","root":"/ws"}`,
		`{"kind":"path_scope","paths":["/ws","/b/file.md"],"allowed_operations":["read_file","create_file","execute_command"]}`,
		`{"kind":"guard_paths","allowed_paths":["$workspace"],"denied_paths":["$workspace/secret"]}`,
		`{"kind":"workspace","root":"$workspace/sub"}`,
	} {
		g, err := pathguard.New([]byte(cfg))
		if err != nil {
			f.Fatal(err)
		}
		gates = append(gates, g)
	}
	f.Fuzz(func(t *testing.T, arg, raw, resolved, nearest string, exists bool, tool, op, cwd string) {
		kind := abi.PathKindMissing
		if exists {
			kind = abi.PathKindFile
		}
		in := abi.GateInput{Tool: tool, Operation: op, Cwd: cwd, Workspace: cwd, Arguments: []byte(`{"path":1}`),
			Paths: []abi.PathFact{{Arg: arg, Raw: raw, Resolved: resolved, Exists: exists, Kind: kind, NearestExisting: nearest}}}
		for _, g := range gates {
			out := g.Evaluate(in)
			switch out.Decision {
			case abi.DecisionAllow:
				if out.ReasonCode == pathguard.ReasonAllowed && (resolved == "" || resolved[0] != '/') {
					t.Fatalf("allowed a non-absolute fact %q (%s)", resolved, g.Kind())
				}
			case abi.DecisionDeny:
				if out.Message == "" {
					t.Fatal("deny without message")
				}
			default:
				t.Fatalf("decision %q", out.Decision)
			}
		}
	})
}

// FuzzVirtual feeds arbitrary logical paths to the virtual kind: it must not
// panic, and must never allow a path normalize_virtual_path refuses (NUL,
// backslash, a "~" or drive-prefixed component) or one outside its root.
func FuzzVirtual(f *testing.F) {
	for _, p := range []string{"notes.md", "/tenant/s-1/a", "../s-2/x", "../../..", "~/x", "C:/x", "a\\b", "/ro/x", "/", ""} {
		f.Add(p, "read_file")
		f.Add(p, "create_file")
	}
	g, err := pathguard.New([]byte(`{"kind":"virtual","mounts":[{"name":"tenant"},{"name":"ro","read_only":true}],"roots":["/tenant/s-1","/ro"],"cwd":"/tenant/s-1"}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p, op string) {
		args, _ := json.Marshal(map[string]string{"path": p})
		out := g.Evaluate(abi.GateInput{Tool: "t", Operation: op, Arguments: args})
		switch out.Decision {
		case abi.DecisionAllow:
			if strings.ContainsAny(p, "\x00\\") {
				t.Fatalf("allowed %q", p)
			}
			for _, comp := range strings.Split(p, "/") {
				if strings.HasPrefix(comp, "~") || (len(comp) >= 2 && comp[1] == ':' && (comp[0]|0x20 >= 'a' && comp[0]|0x20 <= 'z')) {
					t.Fatalf("allowed %q", p)
				}
			}
			if out.ReasonCode == pathguard.ReasonAllowed && out.MatchedRule != "/tenant/s-1" && out.MatchedRule != "/ro" {
				t.Fatalf("allowed %q by %q", p, out.MatchedRule)
			}
		case abi.DecisionDeny:
			if out.Message == "" {
				t.Fatal("deny without message")
			}
		default:
			t.Fatalf("decision %q", out.Decision)
		}
	})
}
