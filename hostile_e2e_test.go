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
	"github.com/govhost/govhost/internal/wasmfixtures"
	"github.com/govhost/govhost/policy/policyfile"
)

// TestEndToEnd_HostileModulesLeaveNoTrace: user modules that answer guest
// text (a non-JSON answer, a free-text reason code, a forged output line on
// stdout) and one that recurses forever are denied through the engine, and
// no fixture text reaches the evidence chain; the spy module, bound as a
// user module, never sees another task's token.
func TestEndToEnd_HostileModulesLeaveNoTrace(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, f := range []string{"garbage.wasm", "bad_reason.wasm", "stdout.wasm", "recursion.wasm", "spy.wasm"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), wasmfixtures.Bytes(f), 0o644))
	}
	policy := fmt.Sprintf(`{"policy_id": %q, "version": "1", "gates": [
	  {"gate_id": "garbage", "module": "garbage.wasm", "level": "hard", "order": 1, "tool_ids": ["a"]},
	  {"gate_id": "reason", "module": "bad_reason.wasm", "level": "hard", "order": 2, "tool_ids": ["b"]},
	  {"gate_id": "stdout", "module": "stdout.wasm", "level": "hard", "order": 3, "tool_ids": ["c"]},
	  {"gate_id": "recursion", "module": "recursion.wasm", "level": "hard", "order": 4, "tool_ids": ["d"]},
	  {"gate_id": "spy", "module": "spy.wasm", "level": "hard", "order": 5, "tool_ids": ["spy"]}]}`, uuid.New())
	opts := withCache(govhost.Options{Dir: t.TempDir()})
	cfg := opts.Host.WithCallTimeout(300 * time.Millisecond)
	opts.Host = &cfg
	eng, err := govhost.Open(ctx, opts)
	require.NoError(t, err)
	defer eng.Close(ctx)
	snap, err := policyfile.Load([]byte(policy), "policy.json", eng.Gates.Resolver(root))
	require.NoError(t, err)
	require.NoError(t, eng.Policies.Put(ctx, snap))
	snap, err = eng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), &governance.ActorRef{Kind: "user", ID: "admin"}, time.Now())
	require.NoError(t, err)
	ctl, err := eng.NewController(controller.Config{})
	require.NoError(t, err)
	m := controller.NewManager()
	for _, name := range []string{"a", "b", "c", "d", "spy"} {
		require.NoError(t, m.Register(controller.Tool{ID: name, Fn: func(context.Context, map[string]any) (any, error) { return "ok", nil }}))
	}
	require.NoError(t, m.Govern(ctl, controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}))

	task := func(token string) uuid.UUID {
		boundary, err := controller.RunTask(ctx, ctl, controller.TaskOptions{PolicyID: snap.PolicyID(), Version: snap.Version(), Actor: &governance.ActorRef{Kind: "agent", ID: "coder"}}, func(task *controller.Task) error {
			for _, tool := range []string{"a", "b", "d"} {
				opctx, err := task.Context(tool)
				require.NoError(t, err)
				_, err = m.Invoke(ctx, controller.Call{Tool: tool, Arguments: json.RawMessage(`{}`)}, &opctx)
				var de *governance.GovernanceDeniedError
				require.ErrorAs(t, err, &de, tool)
				require.Equal(t, controller.ReasonEvaluatorError, de.ReasonCode, tool)
			}
			for _, tool := range []string{"c", "spy"} {
				opctx, err := task.Context(tool)
				require.NoError(t, err)
				out, err := m.Invoke(ctx, controller.Call{Tool: tool, Arguments: json.RawMessage(`{"token":"` + token + `"}`)}, &opctx)
				require.NoError(t, err, tool)
				require.Equal(t, "ok", out)
			}
			return nil
		})
		require.NoError(t, err)
		return boundary.ChainID
	}
	chains := []uuid.UUID{task("TOKEN-ONE"), task("TOKEN-TWO")}
	for i, chain := range chains {
		recs, err := eng.Evidence.Read(ctx, chain, -1)
		require.NoError(t, err)
		spy := 0
		for _, r := range recs {
			require.NotContains(t, r.PayloadJSON, "GUEST", "fixture text in evidence")
			require.NotContains(t, r.PayloadJSON, "TOKEN", "raw arguments in evidence")
			var p struct {
				GateID     string `json:"gate_id"`
				ReasonCode string `json:"reason_code"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.PayloadJSON), &p))
			if r.RecordType == governance.GateEvaluated && p.GateID == "spy" {
				spy++
				require.Equal(t, "spy.fresh", p.ReasonCode, "chain %d: the spy's instance served another task", i)
			}
		}
		require.Equal(t, 1, spy)
		require.NotEmpty(t, recs, "chain %d", i)
	}
}
