package govhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/policyfile"
)

// workspacePolicy binds the three built-in gates: the LionAGI permission
// rules on every tool, the AgentLane workspace guard on the file tools and
// the destructive-command guard on bash.
func workspacePolicy(id uuid.UUID, root string) string {
	return fmt.Sprintf(`{
  "policy_id": %q, "version": "2026.11.29",
  "gates": [
    {"gate_id": "permission", "module": "permission", "level": "hard", "order": 10, "tool_ids": ["read", "write", "bash"],
     "config": {"lionagi": {"mode": "rules",
        "allow": {"read": ["*"], "write": ["*"], "bash": ["git status", "ls*", "rm *"]},
        "deny": {"bash": ["sudo *"]},
        "escalate": {"bash": ["make *"]}}}},
    {"gate_id": "pathguard", "module": "pathguard", "level": "hard", "order": 20, "tool_ids": ["read", "write"],
     "config": {"kind": "workspace", "root": %q}},
    {"gate_id": "destructive", "module": "destructive", "level": "hard", "order": 30, "tool_ids": ["bash"]}
  ]}`, id, root)
}

// openWorkspace opens an engine in a temporary data directory with the
// workspace policy stored and active, and returns the workspace root.
func openWorkspace(t *testing.T, dataDir string) (*govhost.Engine, governance.PolicySnapshot, string) {
	t.Helper()
	return openWorkspaceWith(t, govhost.Options{Dir: dataDir})
}

// openWorkspaceWith is openWorkspace on any engine options (another store).
func openWorkspaceWith(t *testing.T, opts govhost.Options) (*govhost.Engine, governance.PolicySnapshot, string) {
	t.Helper()
	ctx := context.Background()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("hello"), 0o644))
	eng, err := govhost.Open(ctx, withCache(opts))
	require.NoError(t, err)
	snap, err := policyfile.Load([]byte(workspacePolicy(uuid.New(), root)), "policy.json", eng.Gates.Resolver(root))
	require.NoError(t, err)
	require.NoError(t, eng.Policies.Put(ctx, snap))
	snap, err = eng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), &governance.ActorRef{Kind: "user", ID: "admin"}, time.Now())
	require.NoError(t, err)
	return eng, snap, root
}

// TestEndToEnd_AgentScript runs an agent-like script of tool calls through
// the built-in Wasm gates and the Pebble store, with an approval broker
// that approves one escalation and rejects another, then verifies the
// chain, every record type and count, and mints the task's certificate.
func TestEndToEnd_AgentScript(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	eng, snap, root := openWorkspace(t, dataDir)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s3cr3t"), 0o600))

	broker := controller.NewApprovalBroker(false)
	events, stop := broker.Events()
	defer stop()
	var brokerWG sync.WaitGroup
	brokerWG.Add(1)
	go func() {
		defer brokerWG.Done()
		for ev := range events {
			if ev.Kind != controller.ApprovalPending {
				continue
			}
			d := abi.DecisionDeny
			if strings.Contains(string(ev.Approval.Request.Arguments), "deploy") {
				d = abi.DecisionAllow
			}
			broker.Resolve(ev.Approval.ID, d, &governance.ActorRef{Kind: "user", ID: "reviewer"})
		}
	}()

	ctl, err := eng.NewController(controller.Config{Approvals: broker.Callback()})
	require.NoError(t, err)
	m := controller.NewManager()
	var mu sync.Mutex
	ran := map[string]int{}
	tool := func(name string) controller.Tool {
		return controller.Tool{ID: name, Fn: func(_ context.Context, args map[string]any) (any, error) {
			mu.Lock()
			ran[name]++
			mu.Unlock()
			return "ok", nil
		}}
	}
	for _, name := range []string{"read", "write", "bash"} {
		require.NoError(t, m.Register(tool(name)))
	}
	require.NoError(t, m.Govern(ctl, controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}))

	type step struct {
		tool, op, args string
		reason         string // "" allowed, else the denial's reason code
	}
	script := []step{
		{"read", "read_file", `{"path":"notes.txt"}`, ""},
		{"read", "read_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(outside, "secret.txt")), "path.outside_root"},
		{"write", "create_file", `{"path":"out.txt","content":"draft"}`, ""},
		{"bash", "execute_command", `{"command":"git status"}`, ""},
		{"bash", "execute_command", `{"command":"rm -rf /"}`, "destructive.rm_recursive_force"},
		{"bash", "execute_command", `{"command":"make deploy"}`, ""},
		{"bash", "execute_command", `{"command":"make clean"}`, controller.ReasonApprovalRequired},
	}
	boundary, err := controller.RunTask(ctx, ctl, controller.TaskOptions{PolicyID: snap.PolicyID(), Version: snap.Version(), Actor: &governance.ActorRef{Kind: "agent", ID: "coder"}}, func(task *controller.Task) error {
		for _, s := range script {
			opctx, err := task.Context(s.tool)
			require.NoError(t, err)
			_, err = m.Invoke(ctx, controller.Call{Tool: s.tool, Operation: s.op, Arguments: json.RawMessage(s.args), Cwd: root}, &opctx)
			if s.reason == "" {
				require.NoError(t, err, "%s %s", s.tool, s.args)
				continue
			}
			var de *governance.GovernanceDeniedError
			require.ErrorAs(t, err, &de, "%s %s", s.tool, s.args)
			require.Equal(t, s.reason, de.ReasonCode, "%s %s", s.tool, s.args)
		}
		return nil
	})
	require.NoError(t, err)
	broker.Close()
	brokerWG.Wait()
	require.Equal(t, map[string]int{"read": 1, "write": 1, "bash": 2}, ran)

	head, err := eng.Evidence.Head(ctx, boundary.ChainID)
	require.NoError(t, err)
	res, err := eng.Evidence.Verify(ctx, boundary.ChainID, head.Hash)
	require.NoError(t, err)
	require.True(t, res.Valid, "%+v", res)
	recs, err := eng.Evidence.Read(ctx, boundary.ChainID, -1)
	require.NoError(t, err)
	counts := map[governance.EvidenceType]int{}
	for _, r := range recs {
		counts[r.RecordType]++
		require.NotContains(t, r.PayloadJSON, "s3cr3t")
		require.NotContains(t, r.PayloadJSON, "draft")
		require.NotContains(t, r.PayloadJSON, "make deploy")
	}
	require.Equal(t, map[governance.EvidenceType]int{
		governance.PolicyBound: 7, governance.OperationStarted: 7, governance.GateEvaluated: 13,
		governance.CallableCompleted: 4, governance.OperationDenied: 3, governance.TaskClosed: 1,
	}, counts)
	require.Len(t, recs, 35)

	cert, err := eng.Issuer().Mint(ctx, boundary, head.Hash)
	require.NoError(t, err)
	require.Equal(t, governance.GradeFull, cert.ProcessGrade)
	require.Equal(t, governance.GateSummary{HardAllow: 10, HardDeny: 3}, cert.GateSummary)

	// Everything acknowledged survives a restart, with the same head.
	require.NoError(t, eng.Close(ctx))
	eng2, err := govhost.Open(ctx, withCache(govhost.Options{Dir: dataDir}))
	require.NoError(t, err)
	defer eng2.Close(ctx)
	res, err = eng2.Evidence.Verify(ctx, boundary.ChainID, head.Hash)
	require.NoError(t, err)
	require.True(t, res.Valid)
	require.Equal(t, int64(35), res.CheckedRecords)
	_, err = eng2.Issuer().Mint(ctx, boundary, head.Hash)
	require.NoError(t, err)
}
