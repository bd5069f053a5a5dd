package hooks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/hooks"
)

// TestService_OversizedToolInputIsRefusedClearly: a 5 MB Bash command fits
// the hook input limit, and is denied request.too_large with the one
// limit in its message — not control.evaluator_error from a gate that ran
// out of memory; a command just under the limit is governed by the gates.
func TestService_OversizedToolInputIsRefusedClearly(t *testing.T) {
	r := newRig(t, hooks.ApprovalAsk)
	sid := "big-" + uuid.NewString()
	res := r.svc.Handle(context.Background(), agents.Claude, "", claudeEvent(sid, r.ws, "PreToolUse",
		pre("Bash", "toolu_1", map[string]any{"command": "echo " + strings.Repeat("a", 5<<20)})))
	require.Equal(t, "deny", decision(t, res))
	require.Equal(t, controller.ReasonTooLarge, res.Verdict.ReasonCode)
	require.Contains(t, res.Verdict.Message, "over the 1 MiB a governed call may carry")
	require.Less(t, 5<<20, hooks.MaxBody, "the hook read it whole")

	// A file just under the limit is written: the gates evaluate it.
	res = r.svc.Handle(context.Background(), agents.Claude, "", claudeEvent(sid, r.ws, "PreToolUse",
		pre("Write", "toolu_2", map[string]any{"file_path": filepath.Join(r.ws, "big.txt"), "content": strings.Repeat("a", abi.MaxArgumentsBytes-256)})))
	require.Equal(t, agents.Allow, res.Verdict.Decision, "%s %s", res.Verdict.ReasonCode, res.Verdict.Message)
}
