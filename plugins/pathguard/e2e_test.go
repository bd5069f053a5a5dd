package pathguard_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/pathfacts"
	"github.com/govhost/govhost/plugins/pathguard"
)

// world is a real temporary tree, realpath'd:
//
//	root/ws/notes.txt  root/ws/.env  root/ws/src/  root/ws/real.py
//	root/ws/link.py -> real.py            root/ws/out -> root/outside
//	root/ws/dangling -> root/outside/new.txt
//	root/outside/secret.txt  root/brief.md  root/approved/  root/private.md
//	root/ws-evil/
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

// resolvedGate configures the gate as the host does: its roots resolved
// first (ResolveConfig with pathfacts.Canonical).
func resolvedGate(t *testing.T, cfg any) *pathguard.Gate {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	raw, err = pathguard.ResolveConfig(raw, pathfacts.Canonical)
	require.NoError(t, err)
	g, err := pathguard.New(raw)
	require.NoError(t, err)
	return g
}

// issue 11 point 4: both originals decide on resolved paths, so a root that
// is itself a symlink (/tmp and /var on macOS, a home on another volume)
// admits what is beneath it, and a symlink that stays inside is inside;
// every escape is still denied.
func TestE2E_SymlinkedRoot(t *testing.T) {
	w := newWorld(t)
	link := filepath.Join(w.root, "ws-link")
	for _, g := range []*pathguard.Gate{
		resolvedGate(t, map[string]any{"kind": "guard_paths", "allowed_paths": []string{link}, "denied_paths": []string{link + "/src/private"}}),
		resolvedGate(t, map[string]any{"kind": "workspace", "root": link}),
		resolvedGate(t, map[string]any{"kind": "path_scope", "paths": []string{link}}),
	} {
		outside := pathguard.ReasonOutsideRoot
		if g.Kind() == pathguard.KindPathScope {
			outside = pathguard.ReasonOutsideScope
		}
		op := func(o string) string {
			if g.Kind() == pathguard.KindGuardPaths {
				return ""
			}
			return o
		}
		tool := func(tl string) string {
			if g.Kind() == pathguard.KindGuardPaths {
				return map[string]string{"read": "reader", "write": "editor"}[tl]
			}
			return tl
		}
		t.Run(g.Kind(), func(t *testing.T) {
			run(t, g, []e2e{
				{"through the linked root", link, tool("read"), op("read_file"), map[string]any{"path": "notes.txt"}, abi.DecisionAllow, pathguard.ReasonAllowed},
				{"absolute through the linked root", "/", tool("read"), op("read_file"), map[string]any{"path": link + "/notes.txt"}, abi.DecisionAllow, pathguard.ReasonAllowed},
				{"the real path", w.ws, tool("read"), op("read_file"), map[string]any{"path": "src"}, abi.DecisionAllow, pathguard.ReasonAllowed},
				{"inside symlink", link, tool("read"), op("read_file"), map[string]any{"path": "link.py"}, abi.DecisionAllow, pathguard.ReasonAllowed},
				{"new file", link, tool("write"), op("create_file"), map[string]any{"path": "src/new.go"}, abi.DecisionAllow, pathguard.ReasonAllowed},
				{"symlink out", link, tool("read"), op("read_file"), map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, outside},
				{"dangling out", link, tool("write"), op("create_file"), map[string]any{"path": "dangling"}, abi.DecisionDeny, outside},
				{"dot-dot after missing", link, tool("read"), op("read_file"), map[string]any{"path": "nope/../../outside/secret.txt"}, abi.DecisionDeny, outside},
				{"sibling", link, tool("read"), op("read_file"), map[string]any{"path": "../private.md"}, abi.DecisionDeny, outside},
			})
		})
	}
	g := resolvedGate(t, map[string]any{"kind": "guard_paths", "allowed_paths": []string{link}, "denied_paths": []string{link + "/src/private"}})
	run(t, g, []e2e{
		{"a denied entry written through the link", link, "editor", "", map[string]any{"file_path": "src/private/k"}, abi.DecisionDeny, pathguard.ReasonDenied},
	})
	// Without the host's resolution the gate fails closed.
	run(t, mustGate(t, map[string]any{"kind": "workspace", "root": link}), []e2e{
		{"unresolved linked root admits nothing", link, "read", "read_file", map[string]any{"path": "notes.txt"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
	})
}

// refuse_symlinks is LionAGI's path_safety floor: a path whose last
// component is a symlink is refused, inside the root too; an intermediate
// symlink is followed and the resolved path decides.
func TestE2E_RefuseSymlinks(t *testing.T) {
	w := newWorld(t)
	g := resolvedGate(t, map[string]any{"kind": "guard_paths", "allowed_paths": []string{w.ws}, "refuse_symlinks": true})
	run(t, g, []e2e{
		{"plain file", w.ws, "reader", "", map[string]any{"path": "notes.txt"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"final symlink inside", w.ws, "reader", "", map[string]any{"path": "link.py"}, abi.DecisionDeny, pathguard.ReasonSymlink},
		{"intermediate symlink out", w.ws, "reader", "", map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"dangling symlink", w.ws, "editor", "", map[string]any{"file_path": "dangling"}, abi.DecisionDeny, pathguard.ReasonSymlink},
	})
}

// call resolves a tool call's path arguments on the real filesystem, as the
// host does, and evaluates it.
func call(t *testing.T, g *pathguard.Gate, cwd, tool, op string, args map[string]any) abi.GateOutput {
	t.Helper()
	rcwd, err := pathfacts.ResolveCwd(cwd)
	require.NoError(t, err)
	facts, err := pathfacts.Resolve(rcwd, args, nil)
	require.NoError(t, err)
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	return g.Evaluate(abi.GateInput{Tool: tool, Operation: op, Arguments: raw, Cwd: rcwd, Paths: facts})
}

func mustGate(t *testing.T, cfg any) *pathguard.Gate {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	g, err := pathguard.New(raw)
	require.NoError(t, err)
	return g
}

type e2e struct {
	name, cwd, tool, op string
	args                map[string]any
	decision            abi.Decision
	code                string
}

func run(t *testing.T, g *pathguard.Gate, cases []e2e) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, g, tc.cwd, tc.tool, tc.op, tc.args)
			require.Equal(t, tc.decision, got.Decision, "%s: %s", got.ReasonCode, got.Detail)
			require.Equal(t, tc.code, got.ReasonCode, got.Detail)
		})
	}
}

func TestE2E_GuardPaths(t *testing.T) {
	w := newWorld(t)
	g := mustGate(t, map[string]any{"kind": "guard_paths", "allowed_paths": []string{w.ws}, "denied_paths": []string{"*.key", w.ws + "/src/private"}})
	run(t, g, []e2e{
		{"inside, existing", w.ws, "reader", "", map[string]any{"path": "notes.txt"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"inside, missing", w.ws, "editor", "", map[string]any{"file_path": "src/new.py"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"absolute inside", "/", "reader", "", map[string]any{"path": w.ws + "/src"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"prefix sibling", w.ws, "reader", "", map[string]any{"path": w.root + "/ws-evil/x"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"relative traversal", w.ws, "reader", "", map[string]any{"path": "../outside/secret.txt"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"final symlink inside", w.ws, "reader", "", map[string]any{"path": "link.py"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"intermediate symlink out", w.ws, "reader", "", map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"dangling symlink out", w.ws, "editor", "", map[string]any{"file_path": "dangling"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"symlink named .env", w.ws, "reader", "", map[string]any{"path": "env-link/.env"}, abi.DecisionDeny, pathguard.ReasonProtected},
		{"dot-dot after missing", w.ws, "reader", "", map[string]any{"path": "nope/../../outside/secret.txt"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"protected .env", w.ws, "reader", "", map[string]any{"path": ".env"}, abi.DecisionDeny, pathguard.ReasonProtected},
		{"glob deny", w.ws, "editor", "", map[string]any{"file_path": "src/api.key"}, abi.DecisionDeny, pathguard.ReasonDenied},
		{"absolute deny dir", w.ws, "editor", "", map[string]any{"file_path": "src/private/x.txt"}, abi.DecisionDeny, pathguard.ReasonDenied},
		{"no path", w.ws, "reader", "", map[string]any{"action": "list"}, abi.DecisionAllow, pathguard.ReasonNoPath},
		{"cwd through a symlink is resolved physically", w.ws + "/out/..", "reader", "", map[string]any{"path": "private.md"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
	})
}

func TestE2E_Workspace(t *testing.T) {
	w := newWorld(t)
	g := mustGate(t, map[string]any{"kind": "workspace", "root": w.ws})
	run(t, g, []e2e{
		{"read inside", w.ws, "read", "read_file", map[string]any{"path": "notes.txt"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"read outside", w.ws, "read", "read_file", map[string]any{"path": "../private.md"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"symlink escape", w.ws, "read", "read_file", map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"symlink inside is fine", w.ws, "read", "read_file", map[string]any{"path": "link.py"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"dangling symlink", w.ws, "write", "create_file", map[string]any{"path": "dangling", "content": "x"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"dot-dot after missing", w.ws, "write", "create_file", map[string]any{"path": "a/../../x.txt", "content": "x"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
		{"bash denied", w.ws, "bash", "execute_command", map[string]any{"command": "ls"}, abi.DecisionDeny, pathguard.ReasonOperationNotAllowed},
		{"inferred write, new nested file", w.ws, "write", "", map[string]any{"path": "src/a/b.txt", "content": "x"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"inferred find without path searches cwd", w.ws, "find", "", map[string]any{"pattern": "*"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"inferred find from outside", w.root, "find", "", map[string]any{"pattern": "*"}, abi.DecisionDeny, pathguard.ReasonOutsideRoot},
	})
	got := call(t, g, w.ws, "read", "read_file", map[string]any{"path": "../private.md"})
	require.Equal(t, "permission denied: read is not allowed for `"+w.root+"/private.md`", got.Message)
}

func TestE2E_PathScope(t *testing.T) {
	w := newWorld(t)
	future := filepath.Join(w.root, "future")
	g := mustGate(t, map[string]any{"kind": "path_scope", "paths": []string{w.ws, w.root + "/brief.md", w.root + "/approved", future}})
	run(t, g, []e2e{
		{"workspace file", w.ws, "read", "read_file", map[string]any{"path": "notes.txt"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"approved outside file", w.ws, "read", "read_file", map[string]any{"path": "../brief.md"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"unapproved sibling", w.ws, "read", "read_file", map[string]any{"path": "../private.md"}, abi.DecisionDeny, pathguard.ReasonOutsideScope},
		{"outside dir descendant", w.ws, "write", "create_file", map[string]any{"path": "../approved/nested/brief.md"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"file scope admits only itself", w.ws, "read", "read_file", map[string]any{"path": "../brief.md/nested.md"}, abi.DecisionDeny, pathguard.ReasonOutsideScope},
		{"missing scope: exact future path", w.ws, "write", "create_file", map[string]any{"path": future}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"missing scope: no children", w.ws, "write", "create_file", map[string]any{"path": future + "/x.md"}, abi.DecisionDeny, pathguard.ReasonOutsideScope},
		{"symlink escape", w.ws, "read", "read_file", map[string]any{"path": "out/secret.txt"}, abi.DecisionDeny, pathguard.ReasonOutsideScope},
	})
	// The scope's type is read at check time: once future is a directory it
	// admits descendants.
	require.NoError(t, os.Mkdir(future, 0o755))
	run(t, g, []e2e{
		{"missing scope became a directory", w.ws, "write", "create_file", map[string]any{"path": future + "/x.md"}, abi.DecisionAllow, pathguard.ReasonAllowed},
	})
}

func TestResolveConfig(t *testing.T) {
	resolve := func(p string) (string, error) {
		if p == "/broken" {
			return "", os.ErrPermission
		}
		return "/real" + p, nil
	}
	out, err := pathguard.ResolveConfig([]byte(`{"kind":"guard_paths","home":"/h","allowed_paths":["~/w","$workspace"],"denied_paths":[".env","/w/s","$workspace/k"],"refuse_symlinks":false}`), resolve)
	require.NoError(t, err)
	require.JSONEq(t, `{"kind":"guard_paths","home":"/h","allowed_paths":["/real/h/w","$workspace"],"denied_paths":[".env","/w/s","/real/w/s","$workspace/k"],"refuse_symlinks":false}`, string(out))
	out, err = pathguard.ResolveConfig([]byte(`{"kind":"path_scope","paths":["/a","/b/c.md"]}`), resolve)
	require.NoError(t, err)
	require.JSONEq(t, `{"kind":"path_scope","paths":["/real/a","/real/b/c.md"]}`, string(out))
	out, err = pathguard.ResolveConfig([]byte(`{"kind":"workspace","root":"/w/"}`), resolve)
	require.NoError(t, err)
	require.JSONEq(t, `{"kind":"workspace","root":"/real/w"}`, string(out))

	_, err = pathguard.ResolveConfig([]byte(`{"kind":"workspace","root":"rel"}`), resolve)
	var ce *pathguard.ConfigError
	require.ErrorAs(t, err, &ce)
	_, err = pathguard.ResolveConfig([]byte(`{"kind":"workspace","root":"/broken"}`), resolve)
	require.ErrorIs(t, err, os.ErrPermission)
	require.False(t, errors.As(err, &ce))
}

// The conformance cases of issue 26, on a real tree: LionAGI allows
// symlinks before the last component and in an allowed root itself.
func TestE2E_RefuseSymlinks_LionAGIIntermediate(t *testing.T) {
	root, err := pathfacts.Canonical(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"project/real", "real2"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{"project/real/a.txt", "real2/a.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "project", "real"), filepath.Join(root, "project", "alias")))
	require.NoError(t, os.Symlink(filepath.Join(root, "real2"), filepath.Join(root, "linkroot")))

	project := resolvedGate(t, map[string]any{"kind": "guard_paths", "allowed_paths": []string{root + "/project"}, "refuse_symlinks": true})
	run(t, project, []e2e{
		{"alias/a.txt through an intermediate link", root, "reader", "", map[string]any{"path": root + "/project/alias/a.txt"}, abi.DecisionAllow, pathguard.ReasonAllowed},
		{"the alias itself", root, "reader", "", map[string]any{"path": root + "/project/alias"}, abi.DecisionDeny, pathguard.ReasonSymlink},
		{"the alias itself, trailing slash", root, "reader", "", map[string]any{"path": "project/alias/"}, abi.DecisionDeny, pathguard.ReasonSymlink},
	})
	real2 := resolvedGate(t, map[string]any{"kind": "guard_paths", "allowed_paths": []string{root + "/real2"}, "refuse_symlinks": true})
	run(t, real2, []e2e{
		{"linkroot/a.txt into the allowed root", root, "reader", "", map[string]any{"path": root + "/linkroot/a.txt"}, abi.DecisionAllow, pathguard.ReasonAllowed},
	})
}
