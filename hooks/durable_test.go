package hooks_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/hooks"
)

// TestService_SessionContinuesItsTaskAfterARestart: a session whose
// server restarts (a new controller and hooks service on the same
// engine) continues its task: the post-tool event of the call authorized
// before the restart is answered (its outcome is on the chain as lost),
// new calls are governed in the same task, an unknown post-tool is still
// refused, and the session ends with one certificate of one chain.
func TestService_SessionContinuesItsTaskAfterARestart(t *testing.T) {
	ctx := context.Background()
	before := newRig(t, hooks.ApprovalAsk)
	sid := "restart-" + uuid.NewString()
	readme := filepath.Join(before.ws, "README.md")
	read := map[string]any{"file_path": readme}
	h := func(r *rig, event string, fields map[string]any) hooks.Result {
		return r.svc.Handle(ctx, agents.Claude, "", claudeEvent(sid, r.ws, event, fields))
	}
	require.Equal(t, "none", decision(t, h(before, "SessionStart", map[string]any{"source": "startup"})))
	require.Equal(t, "none", decision(t, h(before, "PreToolUse", pre("Read", "toolu_1", read))))
	require.False(t, h(before, "PostToolUse", post("Read", "toolu_1", read, "ok")).Refused())
	require.Equal(t, "none", decision(t, h(before, "PreToolUse", pre("Read", "toolu_2", read))))
	chain, ok := before.svc.ChainOf(agents.Claude, sid)
	require.True(t, ok)

	after := newRig(t, hooks.ApprovalAsk) // the restarted server
	_, held := after.svc.ChainOf(agents.Claude, sid)
	require.False(t, held, "nothing in memory survives the restart")
	require.False(t, h(after, "PostToolUse", post("Read", "toolu_2", read, "ok")).Refused(), "the call authorized before the restart")
	again, ok := after.svc.ChainOf(agents.Claude, sid)
	require.True(t, ok)
	require.Equal(t, chain, again, "the session continues its task's chain")
	res := h(after, "PostToolUse", post("Read", "toolu_9", read, "ok"))
	require.Equal(t, hooks.CodeNoPendingCall, res.Code, "a post-tool event of no call is still refused")
	require.Equal(t, "none", decision(t, h(after, "PreToolUse", pre("Read", "toolu_3", read))))
	require.False(t, h(after, "PostToolUse", post("Read", "toolu_3", read, "ok")).Refused())
	require.Equal(t, "deny", decision(t, h(after, "PreToolUse", pre("Bash", "toolu_4", map[string]any{"command": "rm -rf /"}))))

	end := h(after, "SessionEnd", map[string]any{"reason": "logout"})
	require.False(t, end.Refused(), "%v", end.Err)
	require.NotNil(t, end.Ended.Certificate, end.Ended.CertifyError)
	require.Equal(t, governance.GradeFull, end.Ended.Certificate.ProcessGrade)
	require.Equal(t, chain, end.Ended.Boundary.ChainID)

	var failures []string
	closes := 0
	for _, rec := range after.records(t, chain) {
		var p map[string]any
		require.NoError(t, json.Unmarshal([]byte(rec.PayloadJSON), &p))
		switch rec.RecordType {
		case governance.CallableFailed:
			failures = append(failures, p["failure"].(string))
		case governance.TaskClosed:
			closes++
		}
	}
	require.Equal(t, []string{controller.FailureOutcomeLost}, failures)
	require.Equal(t, 1, closes)

	// The ended session is forgotten: the same id later is a new task.
	require.Equal(t, "none", decision(t, h(after, "SessionStart", map[string]any{"source": "resume"})))
	next, ok := after.svc.ChainOf(agents.Claude, sid)
	require.True(t, ok)
	require.NotEqual(t, chain, next)
}
