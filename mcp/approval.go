package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// PromptApprover asks a person at a terminal (in: what they type, out:
// where the question goes, never the MCP stream): one request at a time,
// "y" or "yes" approves, anything else (or the call's context ending, as
// when the approval timeout runs out) denies. An answer typed after its
// question timed out is not taken for the next question. The request's arguments are
// shown so the person knows what they approve; they are not recorded.
func PromptApprover(in io.Reader, out io.Writer, approver string) controller.ApprovalCallback {
	type typed struct {
		text string
		at   time.Time
	}
	lines := make(chan typed)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- typed{sc.Text(), time.Now()}
		}
		close(lines)
	}()
	var mu sync.Mutex
	return func(ctx context.Context, req controller.ApprovalRequest) (controller.ApprovalDecision, error) {
		mu.Lock()
		defer mu.Unlock()
		asked := time.Now()
		fmt.Fprintf(out, "\ngovhost: %s asks approval for %s\n  reason: %s\n  %s\n  arguments: %s\napprove? [y/N] ",
			abi.DisplayText(req.GateID), abi.DisplayText(req.Tool), abi.DisplayText(req.ReasonCode),
			abi.DisplayText(req.Message), abi.DisplayText(string(req.Arguments)))
		for {
			select {
			case <-ctx.Done():
				fmt.Fprintln(out, "\ngovhost: no answer in time; denied")
				return controller.ApprovalDecision{}, ctx.Err()
			case line, ok := <-lines:
				if !ok {
					return controller.ApprovalDecision{}, io.EOF
				}
				if line.at.Before(asked) {
					continue // typed for an earlier question that timed out
				}
				who := &governance.ActorRef{Kind: "human", ID: approver}
				switch strings.ToLower(strings.TrimSpace(line.text)) {
				case "y", "yes":
					return controller.ApprovalDecision{Decision: abi.DecisionAllow, Approver: who}, nil
				}
				return controller.ApprovalDecision{Decision: abi.DecisionDeny, Approver: who}, nil
			}
		}
	}
}
