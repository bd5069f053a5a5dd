package govhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/policyfile"
)

// Through the embedded Wasm gates: a guard_paths root that is a symlink
// admits the paths beneath it (the host resolves configured roots, as the
// originals do when a policy is built), and one "$workspace" policy
// follows each task's workspace.
func TestEndToEnd_SymlinkedRootAndTaskWorkspace(t *testing.T) {
	ctx := context.Background()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{"real/src", "proj-a", "proj-b", "outside"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(base, "real", "notes.txt"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(base, "outside", "s.txt"), []byte("x"), 0o644))
	link := filepath.Join(base, "root-link")
	require.NoError(t, os.Symlink(filepath.Join(base, "real"), link))
	require.NoError(t, os.Symlink(filepath.Join(base, "outside"), filepath.Join(base, "real", "out")))

	eng, err := govhost.Open(ctx, govhost.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer eng.Close(ctx)
	policy := fmt.Sprintf(`{"policy_id": %q, "version": "1", "gates": [
	  {"gate_id": "guard", "module": "pathguard", "level": "hard", "order": 1, "tool_ids": ["reader"],
	   "config": {"kind": "guard_paths", "allowed_paths": [%q]}},
	  {"gate_id": "ws", "module": "pathguard", "level": "hard", "order": 2, "tool_ids": ["read"],
	   "config": {"kind": "workspace", "root": "$workspace"}}]}`, uuid.New(), link)
	snap, err := policyfile.Load([]byte(policy), "p.json", eng.Gates.Resolver(base))
	require.NoError(t, err)
	require.NoError(t, eng.Policies.Put(ctx, snap))
	snap, err = eng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), &governance.ActorRef{Kind: "user", ID: "admin"}, time.Now())
	require.NoError(t, err)
	ctl, err := eng.NewController(controller.Config{})
	require.NoError(t, err)
	m := controller.NewManager()
	for _, name := range []string{"reader", "read"} {
		require.NoError(t, m.Register(controller.Tool{ID: name, Fn: func(context.Context, map[string]any) (any, error) { return "ok", nil }}))
	}
	require.NoError(t, m.Govern(ctl, controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}))

	call := func(task *controller.Task, tool, cwd, path string) string {
		opctx, err := task.Context(tool)
		require.NoError(t, err)
		args, _ := json.Marshal(map[string]string{"path": path})
		_, err = m.Invoke(ctx, controller.Call{Tool: tool, Operation: "read_file", Arguments: args, Cwd: cwd}, &opctx)
		if err == nil {
			return "allow"
		}
		var de *governance.GovernanceDeniedError
		require.ErrorAs(t, err, &de)
		return de.ReasonCode
	}
	open := func(ws string) *controller.Task {
		task, err := ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: snap.PolicyID(), Version: snap.Version(), Workspace: ws})
		require.NoError(t, err)
		return task
	}
	a, b, none := open(filepath.Join(base, "proj-a")), open(filepath.Join(base, "proj-b")), open("")

	require.Equal(t, "allow", call(a, "reader", link, "notes.txt"), "beneath a symlinked root")
	require.Equal(t, "allow", call(a, "reader", "/", link+"/src/new.go"))
	require.Equal(t, "path.outside_root", call(a, "reader", link, "out/s.txt"), "a symlink out of the root")
	require.Equal(t, "path.outside_root", call(a, "reader", link, "../outside/s.txt"))

	require.Equal(t, "allow", call(a, "read", base, "proj-a/x.txt"))
	require.Equal(t, "path.outside_root", call(a, "read", base, "proj-b/x.txt"))
	require.Equal(t, "allow", call(b, "read", base, "proj-b/x.txt"), "the same policy, another task's workspace")
	require.Equal(t, "path.no_workspace", call(none, "read", base, "proj-a/x.txt"))
}
