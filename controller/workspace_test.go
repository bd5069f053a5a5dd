package controller_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/pathfacts"
)

// issue 15 §2: a task opened with a workspace passes it, resolved, to
// every gate of its operations, however the operation is run; a policy
// saying "$workspace" then follows the task.
func TestTask_WorkspaceReachesGates(t *testing.T) {
	root, err := pathfacts.Canonical(t.TempDir())
	require.NoError(t, err)
	proj, other := filepath.Join(root, "proj"), filepath.Join(root, "other")
	require.NoError(t, os.MkdirAll(proj, 0o755))
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.Symlink(proj, filepath.Join(root, "proj-link")))

	guard := builtinGate(t, "pathguard", `{"kind":"workspace","root":"$workspace"}`)
	var seen []string
	gate := nativeGate(func(in abi.GateInput) abi.GateOutput {
		seen = append(seen, in.Workspace)
		return guard(in)
	})
	e := newEnv(t, []binding{hard("paths", gate, "read")}, func(c *controller.Config) { c.PathFacts = pathfacts.ResolveCall })
	ctx := context.Background()
	open := func(ws string) *controller.Task {
		task, err := e.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version(), Workspace: ws})
		require.NoError(t, err)
		return task
	}
	read := func(task *controller.Task, p string) error {
		opctx, err := task.Context("read")
		require.NoError(t, err)
		args, _ := json.Marshal(map[string]string{"path": p})
		_, err = e.m.Invoke(ctx, controller.Call{Tool: "read", Operation: "read_file", Arguments: args, Cwd: root}, &opctx)
		return err
	}

	inProj := open(filepath.Join(root, "proj-link")) // resolved when the task opens
	require.Equal(t, proj, inProj.Workspace())
	require.NoError(t, read(inProj, "proj/a.txt"))
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, read(inProj, "other/a.txt"), &de)
	require.Equal(t, "path.outside_root", de.ReasonCode)

	inOther := open(other)
	require.NoError(t, read(inOther, "other/a.txt"), "the same policy follows the other task's workspace")
	_, err = inOther.Authorize(ctx, controller.Call{Tool: "read", Operation: "read_file", Arguments: json.RawMessage(`{"path":"other/b.txt"}`), Cwd: root})
	require.NoError(t, err, "the two-phase form sees the workspace too")

	none := open("")
	require.ErrorAs(t, read(none, "proj/a.txt"), &de)
	require.Equal(t, "path.no_workspace", de.ReasonCode, "a $workspace policy without a task workspace denies")
	require.Equal(t, []string{proj, proj, other, other, ""}, seen)

	opctx, err := inProj.Context("read")
	require.NoError(t, err)
	_, err = inProj.Close(ctx)
	require.NoError(t, err)
	_, err = e.m.Invoke(ctx, controller.Call{Tool: "read", Operation: "read_file", Arguments: json.RawMessage(`{"path":"proj/a.txt"}`), Cwd: root}, &opctx)
	require.ErrorAs(t, err, &de, "a closed task's workspace is forgotten")
	require.Equal(t, "path.no_workspace", de.ReasonCode)
}

func TestOpenTask_WorkspaceMustBeAbsolute(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"), "read")})
	for _, ws := range []string{"proj", "./x", "a\x00b"} {
		_, err := e.ctl.OpenTask(context.Background(), controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version(), Workspace: ws})
		var ve *governance.ValidationError
		require.ErrorAs(t, err, &ve, ws)
		require.Equal(t, "workspace", ve.Field)
	}
	task, err := e.ctl.OpenTask(context.Background(), controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version(), Workspace: "/srv/app/../app/"})
	require.NoError(t, err)
	require.Equal(t, "/srv/app", task.Workspace(), "without a resolver the workspace is cleaned")
}

// The library's dry run takes the workspace too, resolved like OpenTask's.
func TestDryRun_Workspace(t *testing.T) {
	root, err := pathfacts.Canonical(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Symlink(root, filepath.Join(root, "link")))
	guard := builtinGate(t, "pathguard", `{"kind":"workspace","root":"$workspace"}`)
	e := newEnv(t, []binding{hard("paths", guard, "read"), {id: "adv", level: governance.LevelAdvisory, tools: []string{"read"}, gate: answer(abi.DecisionDeny, "adv.no")}})
	provider := controller.GateProviderFunc(func(_ context.Context, b governance.ExecutableGateBinding) (controller.Gate, error) {
		if b.GateID() == "paths" {
			return guard, nil
		}
		return answer(abi.DecisionDeny, "adv.no"), nil
	})
	call := controller.Call{Tool: "read", Operation: "read_file", Arguments: json.RawMessage(`{"path":"x.txt"}`), Cwd: root}
	res, err := controller.DryRun(context.Background(), provider, e.snap, call, controller.DryRunOptions{Workspace: filepath.Join(root, "link"), PathFacts: pathfacts.ResolveCall})
	require.NoError(t, err)
	require.Equal(t, abi.DecisionAllow, res.Decision, "an advisory deny does not deny: %+v", res)
	require.Len(t, res.Gates, 2)
	require.Equal(t, root, res.Gates[0].Output.MatchedRule)

	res, err = controller.DryRun(context.Background(), provider, e.snap, call, controller.DryRunOptions{PathFacts: pathfacts.ResolveCall})
	require.NoError(t, err)
	require.Equal(t, abi.DecisionDeny, res.Decision)
	require.Equal(t, "path.no_workspace", res.ReasonCode)

	_, err = controller.DryRun(context.Background(), provider, e.snap, call, controller.DryRunOptions{Workspace: "rel"})
	var ve *governance.ValidationError
	require.ErrorAs(t, err, &ve)

	res, err = controller.DryRun(context.Background(), provider, e.snap, controller.Call{Tool: "nope"}, controller.DryRunOptions{})
	require.NoError(t, err)
	require.Equal(t, controller.ReasonNoGateBinding, res.ReasonCode)
}
