package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/mcp"
)

func TestPromptApprover(t *testing.T) {
	in, typed := io.Pipe()
	var out strings.Builder
	ask := mcp.PromptApprover(in, &out, "ana")
	req := controller.ApprovalRequest{Tool: "fs/write_file", GateID: "grants_and_approval", ReasonCode: "permission.side_effect",
		Message: "approval required", Arguments: json.RawMessage(`{"path":"/ws/a\u001b[2J"}`)}

	go func() { _, _ = io.WriteString(typed, "y\n") }()
	d, err := ask(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, abi.DecisionAllow, d.Decision)
	require.Equal(t, "ana", d.Approver.ID)
	require.Contains(t, out.String(), "fs/write_file")
	require.NotContains(t, out.String(), "\x1b", "guest and argument text is escaped on the terminal")

	go func() { _, _ = io.WriteString(typed, "nope\n") }()
	d, err = ask(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, abi.DecisionDeny, d.Decision)

	// No answer before the timeout: denied by the caller's context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = mcp.WithApprovalTimeout(ask, time.Hour)(ctx, req)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The late answer to the timed-out question does not approve the next.
	_, _ = io.WriteString(typed, "y\n")
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(typed, "n\n")
	}()
	time.Sleep(20 * time.Millisecond)
	d, err = ask(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, abi.DecisionDeny, d.Decision)
}
