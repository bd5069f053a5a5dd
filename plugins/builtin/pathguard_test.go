package builtin_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
)

// The pathguard module's own promises beyond its case table
// (plugins/pathguard/testdata/cases.json): the tests of the Go gate it
// replaced, asked of the module. Its end-to-end cases on a real tree, with
// the host's resolution of configured roots, are the root package's
// (pathguard_e2e_test.go).

// TestPathguard_OutsideTheWorkspace: AgentLane's text for a read outside
// the workspace root.
func TestPathguard_OutsideTheWorkspace(t *testing.T) {
	g := newModuleHost(t).gate(t, "pathguard", `{"kind": "workspace", "root": "/workspace/app"}`)
	out := g(abi.GateInput{
		Tool: "read", Operation: "read_file", Cwd: "/workspace/app",
		Arguments: []byte(`{"path":"../private.txt"}`),
		Paths: []abi.PathFact{{Arg: "path", Raw: "../private.txt", Resolved: "/workspace/private.txt",
			Exists: true, Kind: abi.PathKindFile, NearestExisting: "/workspace/private.txt"}},
	})
	require.Equal(t, abi.DecisionDeny, out.Decision)
	require.Equal(t, "path.outside_root", out.ReasonCode)
	require.Equal(t, "permission denied: read is not allowed for `/workspace/private.txt`", out.Message)
}

// TestPathguard_Configs: configurations of every kind the module accepts,
// and ones it refuses: unknown kinds and fields, wrong types, relative or
// unexpandable paths, "$workspace" paths that escape, unknown operations,
// and the virtual kind's namespace rules (a blank cwd is refused, as
// normalize_virtual_path refuses it).
func TestPathguard_Configs(t *testing.T) {
	m := newModuleHost(t)
	for _, cfg := range []string{
		`{"kind":"guard_paths"}`,
		`{"kind":"guard_paths","allowed_paths":null,"denied_paths":null}`,
		`{"kind":"guard_paths","allowed_paths":["/ws/"],"denied_paths":[".env","*.key","/ws/secret","", "~/x"],"home":"/home/u"}`,
		`{"kind":"workspace","root":"/ws"}`,
		`{"kind":"workspace","root":"~/proj","home":"/home/u","allowed_operations":null}`,
		`{"kind":"workspace","root":"/ws","allowed_operations":[]}`,
		`{"kind":"workspace","root":"/ws","allowed_operations":["read_file","search_files","create_file","overwrite_file","modify_file","create_directory","execute_command","network_access"]}`,
		`{"kind":"path_scope","paths":[]}`,
		`{"kind":"workspace","root":"$workspace"}`,
		`{"kind":"virtual","mounts":[{"name":"tenant"},{"name":"skills","read_only":true}],"roots":["/tenant/sessions/s-1","skills"],"cwd":"tenant/sessions/s-1/./"}`,
		`{"kind":"virtual","mounts":[],"allowed_operations":["read_file"]}`,
		`{"kind":"path_scope","paths":["$workspace","$workspace/docs/./x/","/srv/shared"]}`,
		`{"kind":"guard_paths","allowed_paths":["$workspace","/srv"],"denied_paths":["$workspace/.env.d","*.key"]}`,
		`{"kind":"path_scope","paths":["/ws","/x/brief.md"],"allowed_operations":["read_file"]}`,
	} {
		_, err := m.configure(t, "pathguard", []byte(cfg))
		require.NoError(t, err, cfg)
	}
	for _, cfg := range []string{
		``, `null`, `[]`, `{"root":"/ws"}`, `{"kind":1}`, `{"kind":"allow_all"}`, `{"kind":"guard_paths","root":"/ws"}`,
		`{"kind":"workspace","root":"/ws","allowed_operation":["read_file"]}`, `{"kind":"workspace","root":"ws"}`, `{"kind":"virtual"}`,
		`{"kind":"virtual","mounts":[{"name":"t"}],"cwd":""}`, `{"kind":"virtual","mounts":[{"name":"t"}],"cwd":" "}`,
		`{"kind":"virtual","mounts":[{"name":"a/b"}]}`, `{"kind":"virtual","mounts":[{"name":".."}]}`, `{"kind":"virtual","mounts":[{"name":"c:"}]}`,
		`{"kind":"virtual","mounts":[{"name":"t"},{"name":"t"}]}`, `{"kind":"virtual","mounts":[{"read_only":true}]}`,
		`{"kind":"virtual","mounts":[{"name":"t","ro":true}]}`, `{"kind":"virtual","mounts":[{"name":"t","read_only":"yes"}]}`,
		`{"kind":"virtual","mounts":[{"name":"t"}],"cwd":"/t/../.."}`, `{"kind":"virtual","mounts":[{"name":"t"}],"roots":["/t/~x"]}`,
		`{"kind":"virtual","mounts":[{"name":"t"}],"root":"/t"}`, `{"kind":"workspace","root":"$workspace/../x"}`,
		`{"kind":"path_scope","paths":["/a","$workspace/a/../.."]}`, `{"kind":"guard_paths","denied_paths":["$workspace/.."]}`,
		`{"kind":"workspace","root":"$workspaces"}`, `{"kind":"workspace"}`, `{"kind":"workspace","root":""}`, `{"kind":"workspace","root":"~/ws"}`,
		`{"kind":"workspace","root":"~bob/ws","home":"/home/u"}`, `{"kind":"workspace","root":"/ws","home":"home"}`, `{"kind":"workspace","root":"/ws\u0000x"}`,
		`{"kind":"workspace","root":"/ws","allowed_operations":["read_file","delete_file"]}`, `{"kind":"workspace","root":"/ws","checked_operations":["write_file"]}`,
		`{"kind":"guard_paths","every_path_argument":"yes"}`, `{"kind":"workspace","root":"/ws","every_path_argument":true}`,
		`{"kind":"workspace","root":"/ws","allowed_operations":["READ_FILE"]}`, `{"kind":"workspace","root":"/ws","allowed_operations":"read_file"}`,
		`{"kind":"path_scope"}`, `{"kind":"path_scope","paths":null}`, `{"kind":"path_scope","paths":["/ws","brief.md"]}`, `{"kind":"path_scope","paths":[1]}`,
		`{"kind":"guard_paths","allowed_paths":["/ok","project"]}`, `{"kind":"guard_paths","allowed_paths":[""]}`, `{"kind":"guard_paths","denied_paths":["~/.ssh"]}`,
		`{"kind":"guard_paths","denied_paths":[null]}`, `{"kind":"guard_paths","denied_paths":["a\u0000"]}`,
	} {
		_, err := m.configure(t, "pathguard", []byte(cfg))
		require.True(t, refused(err) || errors.Is(err, host.ErrBadGateConfig), "%s: %v", cfg, err)
	}
}

// FuzzPathguard_Evaluate feeds arbitrary facts to each kind: the module
// answers allow or deny only, a deny with its message, and never admits a
// path whose fact is not absolute.
func FuzzPathguard_Evaluate(f *testing.F) {
	f.Add("path", "notes.txt", "/ws/notes.txt", "/ws", true, "read", "read_file", "/ws")
	f.Add("file_path", "../x", "/x", "/", false, "write", "", "/ws/sub")
	f.Add("path", "~/a", "/home/u/a", "/home/u", true, "grep", "", "")
	f.Add("path", "", "", "", false, "bash", "execute_command", "/")
	f.Add("path", "a/../..", "/ws/../x", "/ws", false, "find", "search_files", "relative")
	m := newModuleHost(f)
	var gates []func(abi.GateInput) abi.GateOutput
	for _, cfg := range []string{
		`{"kind":"guard_paths","allowed_paths":["/ws","/b"],"denied_paths":["*.key","?","/ws/secret",".env","[!a-z]x",""],"home":"/home/u"}`,
		`{"kind":"guard_paths","denied_paths":["x*"]}`,
		`{"kind":"workspace","root":"/ws"}`,
		`{"kind":"path_scope","paths":["/ws","/b/file.md"],"allowed_operations":["read_file","create_file","execute_command"]}`,
		`{"kind":"guard_paths","allowed_paths":["$workspace"],"denied_paths":["$workspace/secret"]}`,
		`{"kind":"workspace","root":"$workspace/sub"}`,
	} {
		gates = append(gates, m.gate(f, "pathguard", cfg))
	}
	f.Fuzz(func(t *testing.T, arg, raw, resolved, nearest string, exists bool, tool, op, cwd string) {
		kind := abi.PathKindMissing
		if exists {
			kind = abi.PathKindFile
		}
		in := abi.GateInput{Tool: tool, Operation: op, Cwd: cwd, Workspace: cwd, Arguments: []byte(`{"path":1}`),
			Paths: []abi.PathFact{{Arg: arg, Raw: raw, Resolved: resolved, Exists: exists, Kind: kind, NearestExisting: nearest}}}
		for _, g := range gates {
			out := g(in)
			switch out.Decision {
			case abi.DecisionAllow:
				if out.ReasonCode == "path.allowed" && (resolved == "" || resolved[0] != '/') {
					t.Fatalf("allowed a non-absolute fact %q", resolved)
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

// FuzzPathguard_Virtual feeds arbitrary logical paths to the virtual kind:
// it never allows a path normalize_virtual_path refuses (NUL, backslash, a
// "~" or drive-prefixed component) or one outside its roots.
func FuzzPathguard_Virtual(f *testing.F) {
	for _, p := range []string{"notes.md", "/tenant/s-1/a", "../s-2/x", "../../..", "~/x", "C:/x", "a\\b", "/ro/x", "/", "", "0:"} {
		f.Add(p, "read_file")
		f.Add(p, "create_file")
	}
	g := newModuleHost(f).gate(f, "pathguard", `{"kind":"virtual","mounts":[{"name":"tenant"},{"name":"ro","read_only":true}],"roots":["/tenant/s-1","/ro"],"cwd":"/tenant/s-1"}`)
	f.Fuzz(func(t *testing.T, p, op string) {
		args, _ := json.Marshal(map[string]string{"path": p})
		out := g(abi.GateInput{Tool: "t", Operation: op, Arguments: args})
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
			if out.ReasonCode == "path.allowed" && out.MatchedRule != "/tenant/s-1" && out.MatchedRule != "/ro" {
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
