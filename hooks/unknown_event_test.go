package hooks_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hooks"
)

// TestService_MisspelledPreToolEventIsGoverned: a typo in the event name
// no longer lets rm -rf / through with {}.
func TestService_MisspelledPreToolEventIsGoverned(t *testing.T) {
	r := newRig(t, hooks.ApprovalAsk)
	sid := "typo-" + uuid.NewString()
	res := r.svc.Handle(context.Background(), agents.Claude, "", claudeEvent(sid, r.ws, "PreToolUze",
		pre("Bash", "toolu_1", map[string]any{"command": "rm -rf /"})))
	require.Equal(t, "deny", decision(t, res))
	require.True(t, res.Answer.Blocks)
}
