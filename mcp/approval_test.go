package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/mcp"
)

// screen is the approver's terminal: it keeps what was shown and tells the
// test each time a question is asked, so an answer is typed after its
// question (one typed before it is, by design, not taken for it).
type screen struct {
	mu    sync.Mutex
	text  strings.Builder
	asked chan struct{}
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.Contains(string(p), "approve? [y/N]") {
		s.asked <- struct{}{}
	}
	return s.text.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text.String()
}

func TestPromptApprover(t *testing.T) {
	in, typed := io.Pipe()
	out := &screen{asked: make(chan struct{}, 8)}
	ask := mcp.PromptApprover(in, out, "ana")
	req := controller.ApprovalRequest{Tool: "fs/write_file", GateID: "grants_and_approval", ReasonCode: "permission.side_effect",
		Message: "approval required", Arguments: json.RawMessage(`{"path":"/ws/a\u001b[2J"}`)}
	answer := func(text string) {
		go func() {
			<-out.asked
			_, _ = io.WriteString(typed, text)
		}()
	}

	answer("y\n")
	d, err := ask(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, abi.DecisionAllow, d.Decision)
	require.Equal(t, "ana", d.Approver.ID)
	require.Contains(t, out.String(), "fs/write_file")
	require.NotContains(t, out.String(), "\x1b", "guest and argument text is escaped on the terminal")

	answer("nope\n")
	d, err = ask(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, abi.DecisionDeny, d.Decision)

	// No answer before the timeout: denied by the caller's context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = mcp.WithApprovalTimeout(ask, time.Hour)(ctx, req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	<-out.asked

	// The late answer to the timed-out question does not approve the next.
	_, _ = io.WriteString(typed, "y\n")
	time.Sleep(20 * time.Millisecond) // the late line is read (and timed) before the next question
	answer("n\n")
	d, err = ask(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, abi.DecisionDeny, d.Decision)
}
