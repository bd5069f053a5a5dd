package govhost_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/pathfacts"
	"github.com/govhost/govhost/plugins/builtin"
)

// The pathguard module on a real tree, configured the way the embedded
// default configures it (Gates.GateFor: the host resolves the configured
// roots first, builtinconfig.go) and asked about calls whose path facts the
// host resolved (pathfacts), as the controller does. These were the Go
// gate's end-to-end tests (plugins/pathguard, retired); the module answers
// them unchanged.

const (
	reasonAllowed             = "path.allowed"
	reasonNoPath              = "path.no_path"
	reasonOutsideRoot         = "path.outside_root"
	reasonOutsideScope        = "path.outside_scope"
	reasonDenied              = "path.denied"
	reasonSymlink             = "path.symlink"
	reasonProtected           = "path.protected"
	reasonOperationNotAllowed = "path.operation_not_allowed"
)

// world is a real temporary tree, realpath'd:
//
//	root/ws/notes.txt  root/ws/.env  root/ws/src/  root/ws/real.py
//	root/ws/link.py -> real.py            root/ws/out -> root/outside
//	root/ws/dangling -> root/outside/new.txt
//	root/outside/secret.txt  root/brief.md  root/approved/  root/private.md
//	root/ws-evil/  root/ws-link -> root/ws  root/ws/env-link/.env -> root/ws/notes.txt
type world struct{ root, ws, outside string }

func newWorld(t *testing.T) world {
	t.Helper()
	root, err := pathfacts.Canonical(t.TempDir())
	require.NoError(t, err)
	w := world{root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	for _, d := range []string{"ws/src", "outside", "approved", "ws-evil"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{"ws/notes.txt", "ws/.env", "ws/real.py", "outside/secret.txt", "brief.md", "private.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink("real.py", filepath.Join(w.ws, "link.py")))
	require.NoError(t, os.Symlink(w.outside, filepath.Join(w.ws, "out")))
	require.NoError(t, os.Symlink(filepath.Join(w.outside, "new.txt"), filepath.Join(w.ws, "dangling")))
	require.NoError(t, os.Symlink(w.ws, filepath.Join(root, "ws-link")))
	require.NoError(t, os.MkdirAll(filepath.Join(w.ws, "env-link"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(w.ws, "notes.txt"), filepath.Join(w.ws, "env-link", ".env")))
	return w
}

// pathGate is a configured pathguard module and its kind.
type pathGate struct {
	kind     string
	evaluate func(context.Context, abi.GateInput) (abi.GateOutput, error)
}

func (g *pathGate) Kind() string { return g.kind }

// newGates is the embedded default's gate resolver on its own host.
func newGates(t *testing.T) *govhost.Gates {
	t.Helper()
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	t.Cleanup(func() { h.Close(ctx) })
	gates, err := govhost.NewGates(h, "")
	require.NoError(t, err)
	return gates
}

// resolvedGate configures the pathguard module through gates, as a policy
// binding does: its roots resolved by the host first.
func resolvedGate(t *testing.T, gates *govhost.Gates, cfg map[string]any) *pathGate {
	t.Helper()
	config, err := governance.Canonical(cfg)
	require.NoError(t, err)
	m, ok := builtin.Lookup("pathguard")
	require.True(t, ok)
	b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{GateID: "paths", AdapterID: govhost.AdapterWasm,
		Level: governance.LevelHard, ToolIDs: []string{"*"}, ModuleDigest: m.Digest, Config: string(config)})
	require.NoError(t, err)
	g, err := gates.GateFor(context.Background(), b)
	require.NoError(t, err)
	return &pathGate{kind: cfg["kind"].(string), evaluate: g.Evaluate}
}

// unresolvedGate is the module configured with cfg as it is, without the
// host's step.
func unresolvedGate(t *testing.T, cfg map[string]any) *pathGate {
	t.Helper()
	config, err := json.Marshal(cfg)
	require.NoError(t, err)
	g, err := gatetest.Builtin(context.Background(), "pathguard", config)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return &pathGate{kind: cfg["kind"].(string), evaluate: func(_ context.Context, in abi.GateInput) (abi.GateOutput, error) { return g.Evaluate(in), nil }}
}

// call resolves a tool call's path arguments on the real filesystem, as the
// host does, and asks the gate.
func call(t *testing.T, g *pathGate, cwd, tool, op string, args map[string]any) abi.GateOutput {
	t.Helper()
	rcwd, err := pathfacts.ResolveCwd(cwd)
	require.NoError(t, err)
	facts, err := pathfacts.Resolve(rcwd, args, nil)
	require.NoError(t, err)
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	out, err := g.evaluate(context.Background(), abi.GateInput{Tool: tool, Operation: op, Arguments: raw, Cwd: rcwd, Paths: facts})
	require.NoError(t, err)
	return out
}

type e2e struct {
	name, cwd, tool, op string
	args                map[string]any
	decision            abi.Decision
	code                string
}

func run(t *testing.T, g *pathGate, cases []e2e) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, g, tc.cwd, tc.tool, tc.op, tc.args)
			require.Equal(t, tc.decision, got.Decision, "%s: %s", got.ReasonCode, got.Detail)
			require.Equal(t, tc.code, got.ReasonCode, got.Detail)
		})
	}
}

// issue 11 point 4: both originals decide on resolved paths, so a root that
// is itself a symlink (/tmp and /var on macOS, a home on another volume)
// admits what is beneath it, and a symlink that stays inside is inside;
// every escape is still denied.
func TestPathguardE2E_SymlinkedRoot(t *testing.T) {
	w := newWorld(t)
	gates := newGates(t)
	link := filepath.Join(w.root, "ws-link")
	for _, g := range []*pathGate{
		resolvedGate(t, gates, map[string]any{"kind": "guard_paths", "allowed_paths": []string{link}, "denied_paths": []string{link + "/src/private"}}),
		resolvedGate(t, gates, map[string]any{"kind": "workspace", "root": link}),
		resolvedGate(t, gates, map[string]any{"kind": "path_scope", "paths": []string{link}}),
	} {
		outside := reasonOutsideRoot
		if g.Kind() == "path_scope" {
			outside = reasonOutsideScope
		}
		op := func(o string) string {
			if g.Kind() == "guard_paths" {
				return ""
			}
			return o
		}
		tool := func(tl string) string {
			if g.Kind() == "guard_paths" {
				return map[string]string{"read": "reader", "write": "editor"}[tl]
			}
			return tl
		}
		t.Run(g.Kind(), func(t *testing.T) {
			run(t, g, []e2e{
				{"through the linked root", link, tool("read"), op("read_file"), map[string]any{"path": "notes.txt"}, abi.DecisionAllow, reasonAllowed},
				{"absolute through the linked root", "/", tool("read"), op("read_file"), map[string]any{"path": link + "/notes.txt"}, abi.DecisionAllow, reasonAllowed},
				{"the real path", w.ws, tool("read"), op("read_file"), map[string]any{"path": "src"}, abi.DecisionAllow, reasonAllowed},
				{"inside symlink", link, tool("read"), op("read_file"), map[string]any{"path": "link.py"}, abi.DecisionAllow, reasonAllowed},
				{"new file", link, tool("write"), op("create_file"), map[string]any{"path": "src/new.go"}, abi.DecisionAllow, reasonAllowed},
				{"symlink out", link, tool("read"), op("read_file"), map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, outside},
				{"dangling out", link, tool("write"), op("create_file"), map[string]any{"path": "dangling"}, abi.DecisionDeny, outside},
				{"dot-dot after missing", link, tool("read"), op("read_file"), map[string]any{"path": "nope/../../outside/secret.txt"}, abi.DecisionDeny, outside},
				{"sibling", link, tool("read"), op("read_file"), map[string]any{"path": "../private.md"}, abi.DecisionDeny, outside},
			})
		})
	}
	g := resolvedGate(t, gates, map[string]any{"kind": "guard_paths", "allowed_paths": []string{link}, "denied_paths": []string{link + "/src/private"}})
	run(t, g, []e2e{
		{"a denied entry written through the link", link, "editor", "", map[string]any{"file_path": "src/private/k"}, abi.DecisionDeny, reasonDenied},
	})
	// Without the host's resolution the gate fails closed.
	run(t, unresolvedGate(t, map[string]any{"kind": "workspace", "root": link}), []e2e{
		{"unresolved linked root admits nothing", link, "read", "read_file", map[string]any{"path": "notes.txt"}, abi.DecisionDeny, reasonOutsideRoot},
	})
}

// refuse_symlinks is LionAGI's path_safety floor: a path whose last
// component is a symlink is refused, inside the root too; an intermediate
// symlink is followed and the resolved path decides.
func TestPathguardE2E_RefuseSymlinks(t *testing.T) {
	w := newWorld(t)
	gates := newGates(t)
	g := resolvedGate(t, gates, map[string]any{"kind": "guard_paths", "allowed_paths": []string{w.ws}, "refuse_symlinks": true})
	run(t, g, []e2e{
		{"plain file", w.ws, "reader", "", map[string]any{"path": "notes.txt"}, abi.DecisionAllow, reasonAllowed},
		{"final symlink inside", w.ws, "reader", "", map[string]any{"path": "link.py"}, abi.DecisionDeny, reasonSymlink},
		{"intermediate symlink out", w.ws, "reader", "", map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, reasonOutsideRoot},
		{"dangling symlink", w.ws, "editor", "", map[string]any{"file_path": "dangling"}, abi.DecisionDeny, reasonSymlink},
	})
}

func TestPathguardE2E_GuardPaths(t *testing.T) {
	w := newWorld(t)
	gates := newGates(t)
	g := resolvedGate(t, gates, map[string]any{"kind": "guard_paths", "allowed_paths": []string{w.ws}, "denied_paths": []string{"*.key", w.ws + "/src/private"}})
	run(t, g, []e2e{
		{"inside, existing", w.ws, "reader", "", map[string]any{"path": "notes.txt"}, abi.DecisionAllow, reasonAllowed},
		{"inside, missing", w.ws, "editor", "", map[string]any{"file_path": "src/new.py"}, abi.DecisionAllow, reasonAllowed},
		{"absolute inside", "/", "reader", "", map[string]any{"path": w.ws + "/src"}, abi.DecisionAllow, reasonAllowed},
		{"prefix sibling", w.ws, "reader", "", map[string]any{"path": w.root + "/ws-evil/x"}, abi.DecisionDeny, reasonOutsideRoot},
		{"relative traversal", w.ws, "reader", "", map[string]any{"path": "../outside/secret.txt"}, abi.DecisionDeny, reasonOutsideRoot},
		{"final symlink inside", w.ws, "reader", "", map[string]any{"path": "link.py"}, abi.DecisionAllow, reasonAllowed},
		{"intermediate symlink out", w.ws, "reader", "", map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, reasonOutsideRoot},
		{"dangling symlink out", w.ws, "editor", "", map[string]any{"file_path": "dangling"}, abi.DecisionDeny, reasonOutsideRoot},
		{"symlink named .env", w.ws, "reader", "", map[string]any{"path": "env-link/.env"}, abi.DecisionDeny, reasonProtected},
		{"dot-dot after missing", w.ws, "reader", "", map[string]any{"path": "nope/../../outside/secret.txt"}, abi.DecisionDeny, reasonOutsideRoot},
		{"protected .env", w.ws, "reader", "", map[string]any{"path": ".env"}, abi.DecisionDeny, reasonProtected},
		{"glob deny", w.ws, "editor", "", map[string]any{"file_path": "src/api.key"}, abi.DecisionDeny, reasonDenied},
		{"absolute deny dir", w.ws, "editor", "", map[string]any{"file_path": "src/private/x.txt"}, abi.DecisionDeny, reasonDenied},
		{"no path", w.ws, "reader", "", map[string]any{"action": "list"}, abi.DecisionAllow, reasonNoPath},
		{"cwd through a symlink is resolved physically", w.ws + "/out/..", "reader", "", map[string]any{"path": "private.md"}, abi.DecisionDeny, reasonOutsideRoot},
	})
}

func TestPathguardE2E_Workspace(t *testing.T) {
	w := newWorld(t)
	gates := newGates(t)
	g := resolvedGate(t, gates, map[string]any{"kind": "workspace", "root": w.ws})
	run(t, g, []e2e{
		{"read inside", w.ws, "read", "read_file", map[string]any{"path": "notes.txt"}, abi.DecisionAllow, reasonAllowed},
		{"read outside", w.ws, "read", "read_file", map[string]any{"path": "../private.md"}, abi.DecisionDeny, reasonOutsideRoot},
		{"symlink escape", w.ws, "read", "read_file", map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, reasonOutsideRoot},
		{"symlink inside is fine", w.ws, "read", "read_file", map[string]any{"path": "link.py"}, abi.DecisionAllow, reasonAllowed},
		{"dangling symlink", w.ws, "write", "create_file", map[string]any{"path": "dangling", "content": "x"}, abi.DecisionDeny, reasonOutsideRoot},
		{"dot-dot after missing", w.ws, "write", "create_file", map[string]any{"path": "a/../../x.txt", "content": "x"}, abi.DecisionDeny, reasonOutsideRoot},
		{"bash denied", w.ws, "bash", "execute_command", map[string]any{"command": "ls"}, abi.DecisionDeny, reasonOperationNotAllowed},
		{"inferred write, new nested file", w.ws, "write", "", map[string]any{"path": "src/a/b.txt", "content": "x"}, abi.DecisionAllow, reasonAllowed},
		{"inferred find without path searches cwd", w.ws, "find", "", map[string]any{"pattern": "*"}, abi.DecisionAllow, reasonAllowed},
		{"inferred find from outside", w.root, "find", "", map[string]any{"pattern": "*"}, abi.DecisionDeny, reasonOutsideRoot},
	})
	got := call(t, g, w.ws, "read", "read_file", map[string]any{"path": "../private.md"})
	require.Equal(t, "permission denied: read is not allowed for `"+w.root+"/private.md`", got.Message)
}

func TestPathguardE2E_PathScope(t *testing.T) {
	w := newWorld(t)
	gates := newGates(t)
	future := filepath.Join(w.root, "future")
	g := resolvedGate(t, gates, map[string]any{"kind": "path_scope", "paths": []string{w.ws, w.root + "/brief.md", w.root + "/approved", future}})
	run(t, g, []e2e{
		{"workspace file", w.ws, "read", "read_file", map[string]any{"path": "notes.txt"}, abi.DecisionAllow, reasonAllowed},
		{"approved outside file", w.ws, "read", "read_file", map[string]any{"path": "../brief.md"}, abi.DecisionAllow, reasonAllowed},
		{"unapproved sibling", w.ws, "read", "read_file", map[string]any{"path": "../private.md"}, abi.DecisionDeny, reasonOutsideScope},
		{"outside dir descendant", w.ws, "write", "create_file", map[string]any{"path": "../approved/nested/brief.md"}, abi.DecisionAllow, reasonAllowed},
		{"file scope admits only itself", w.ws, "read", "read_file", map[string]any{"path": "../brief.md/nested.md"}, abi.DecisionDeny, reasonOutsideScope},
		{"missing scope: exact future path", w.ws, "write", "create_file", map[string]any{"path": future}, abi.DecisionAllow, reasonAllowed},
		{"missing scope: no children", w.ws, "write", "create_file", map[string]any{"path": future + "/x.md"}, abi.DecisionDeny, reasonOutsideScope},
		{"symlink escape", w.ws, "read", "read_file", map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, reasonOutsideScope},
	})
	// The scope's type is read at check time: once future is a directory it
	// admits descendants.
	require.NoError(t, os.Mkdir(future, 0o755))
	run(t, g, []e2e{
		{"missing scope became a directory", w.ws, "write", "create_file", map[string]any{"path": future + "/x.md"}, abi.DecisionAllow, reasonAllowed},
	})
}

// The conformance cases of issue 26, on a real tree: LionAGI allows
// symlinks before the last component and in an allowed root itself.
func TestPathguardE2E_RefuseSymlinks_LionAGIIntermediate(t *testing.T) {
	root, err := pathfacts.Canonical(t.TempDir())
	require.NoError(t, err)
	gates := newGates(t)
	for _, d := range []string{"project/real", "real2"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{"project/real/a.txt", "real2/a.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "project", "real"), filepath.Join(root, "project", "alias")))
	require.NoError(t, os.Symlink(filepath.Join(root, "real2"), filepath.Join(root, "linkroot")))

	project := resolvedGate(t, gates, map[string]any{"kind": "guard_paths", "allowed_paths": []string{root + "/project"}, "refuse_symlinks": true})
	run(t, project, []e2e{
		{"alias/a.txt through an intermediate link", root, "reader", "", map[string]any{"path": root + "/project/alias/a.txt"}, abi.DecisionAllow, reasonAllowed},
		{"the alias itself", root, "reader", "", map[string]any{"path": root + "/project/alias"}, abi.DecisionDeny, reasonSymlink},
		{"the alias itself, trailing slash", root, "reader", "", map[string]any{"path": "project/alias/"}, abi.DecisionDeny, reasonSymlink},
	})
	real2 := resolvedGate(t, gates, map[string]any{"kind": "guard_paths", "allowed_paths": []string{root + "/real2"}, "refuse_symlinks": true})
	run(t, real2, []e2e{
		{"linkroot/a.txt into the allowed root", root, "reader", "", map[string]any{"path": root + "/linkroot/a.txt"}, abi.DecisionAllow, reasonAllowed},
	})
}
