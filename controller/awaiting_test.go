package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// recordedStep is a record as the two ways of authorizing must agree on
// it: its type and payload without what differs between two tasks or two
// runs (the task's id, durations, the policy's digest).
type recordedStep struct {
	Type    governance.EvidenceType
	Payload map[string]any
}

func (e *env) steps() []recordedStep {
	var out []recordedStep
	for _, r := range e.records() {
		var p map[string]any
		require.NoError(e.t, json.Unmarshal([]byte(r.PayloadJSON), &p))
		delete(p, "task_boundary_id")
		delete(p, "duration_us")
		delete(p, "policy_digest") // each run has a policy of its own
		out = append(out, recordedStep{Type: r.RecordType, Payload: p})
	}
	return out
}

// phased answers require_approval in the phase ask, allow otherwise.
func phased(ask abi.Phase) *fakeGate {
	return &fakeGate{fn: func(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
		if in.Phase == ask {
			return abi.GateOutput{Decision: abi.DecisionRequireApproval, ReasonCode: "permission.escalate", Message: "approval required"}, nil
		}
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "ok"}, nil
	}}
}

// rewriter is a transform gate that replaces the arguments with args.
func rewriter(args string) *fakeGate {
	return &fakeGate{fn: func(context.Context, abi.GateInput) (abi.GateOutput, error) {
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "rewritten", Arguments: json.RawMessage(args)}, nil
	}}
}

// TestAuthorizeUntilApproval_SameAsAuthorize: an authorization that stops
// where a gate asks for an approval, and is finished later (as the server
// does in a goroutine of its own), answers and records exactly what
// Task.Authorize does; one decided without an approver stops nowhere.
func TestAuthorizeUntilApproval_SameAsAuthorize(t *testing.T) {
	approver := &governance.ActorRef{Kind: "user", ID: "reviewer"}
	decidedAt := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	approve := func(args string) controller.ApprovalCallback {
		return func(context.Context, controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			return controller.ApprovalDecision{Decision: abi.DecisionAllow, Approver: approver, DecidedAt: decidedAt, Arguments: json.RawMessage(args)}, nil
		}
	}
	reject := func(context.Context, controller.ApprovalRequest) (controller.ApprovalDecision, error) {
		return controller.ApprovalDecision{Decision: abi.DecisionDeny, Approver: approver, DecidedAt: decidedAt, Reason: "not today"}, nil
	}
	failing := func(context.Context, controller.ApprovalRequest) (controller.ApprovalDecision, error) {
		return controller.ApprovalDecision{}, errors.New("broker down")
	}
	soft := func(id string, g controller.Gate) binding {
		return binding{id: id, level: governance.LevelSoft, tools: []string{"bash"}, gate: g}
	}
	transform := func(id string, g controller.Gate) binding {
		return binding{id: id, level: governance.LevelHard, tools: []string{"bash"}, gate: g, transform: true}
	}
	cases := []struct {
		name     string
		bindings func() []binding
		cb       controller.ApprovalCallback
		command  string
		held     bool
	}{
		{"allowed without an approver", func() []binding { return []binding{hard("guard", rmGate(), "bash")} }, approve(""), "ls", false},
		{"denied before the asking gate", func() []binding {
			return []binding{hard("guard", rmGate(), "bash"), hard("perm", phased(abi.PhaseCheck), "bash")}
		}, approve(""), "rm -rf /", false},
		{"no approval callback", func() []binding { return []binding{hard("perm", phased(abi.PhaseCheck), "bash")} }, nil, "make", false},
		{"approved, the gates after it run", func() []binding {
			return []binding{hard("perm", phased(abi.PhaseCheck), "bash"), hard("guard", rmGate(), "bash")}
		}, approve(""), "make deploy", true},
		{"rejected", func() []binding {
			return []binding{hard("perm", phased(abi.PhaseCheck), "bash"), hard("guard", rmGate(), "bash")}
		}, reject, "make deploy", true},
		{"the callback fails", func() []binding { return []binding{hard("perm", phased(abi.PhaseCheck), "bash")} }, failing, "make deploy", true},
		{"a later gate denies", func() []binding {
			return []binding{hard("perm", phased(abi.PhaseCheck), "bash"), hard("guard", rmGate(), "bash")}
		}, approve(""), "rm -rf /", true},
		{"the approver's arguments are rechecked and denied", func() []binding {
			return []binding{hard("perm", phased(abi.PhaseCheck), "bash"), hard("guard", rmGate(), "bash")}
		}, approve(`{"command":"rm -rf /"}`), "make deploy", true},
		{"the approver's arguments are rechecked and allowed", func() []binding {
			return []binding{hard("perm", phased(abi.PhaseCheck), "bash"), hard("guard", rmGate(), "bash")}
		}, approve(`{"command":"make deploy --dry-run"}`), "make deploy", true},
		{"asked in the recheck phase after a transform", func() []binding {
			return []binding{hard("guard", rmGate(), "bash"), transform("rewrite", rewriter(`{"command":"make safe"}`)), hard("perm", phased(abi.PhaseRecheck), "bash"), soft("advice", rmGate())}
		}, approve(""), "make", true},
		{"two gates ask", func() []binding {
			return []binding{hard("perm", phased(abi.PhaseCheck), "bash"), hard("second", phased(abi.PhaseCheck), "bash")}
		}, approve(""), "make", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(held bool) (controller.Permit, error, []recordedStep, []controller.Decided, int) {
				var mu sync.Mutex
				var decided []controller.Decided
				var asked atomic.Int32
				e := newEnv(t, c.bindings(), func(cfg *controller.Config) {
					if c.cb != nil {
						cfg.Approvals = func(ctx context.Context, r controller.ApprovalRequest) (controller.ApprovalDecision, error) {
							asked.Add(1)
							return c.cb(ctx, r)
						}
					}
					cfg.Decided = func(d controller.Decided) { mu.Lock(); decided = append(decided, d); mu.Unlock() }
				})
				task := e.openTask()
				te := e.chainOf(task)
				before := len(te.records())
				var p controller.Permit
				var err error
				if !held {
					p, err = task.Authorize(context.Background(), bashCall(c.command))
				} else {
					var w *controller.AwaitingApproval
					p, w, err = task.AuthorizeUntilApproval(context.Background(), bashCall(c.command))
					require.Equal(t, c.held, w != nil, "held where a gate asks the callback")
					if w != nil {
						require.NoError(t, err)
						require.Zero(t, p)
						require.Zero(t, asked.Load(), "nothing is asked before Finish")
						require.Len(t, te.records(), before, "and nothing of the operation is written")
						require.Empty(t, decided, "nor told to the live view")
						require.Equal(t, "perm", w.GateID())
						p, err = w.Finish(context.Background())
						_, again := w.Finish(context.Background())
						require.ErrorIs(t, again, controller.ErrAwaitingFinished)
					}
				}
				if err == nil {
					require.Equal(t, []controller.Permit{p}, e.ctl.OpenPermits(task.ChainID()))
				}
				te.requireVerifies()
				return p, err, te.steps(), decided, int(asked.Load())
			}
			wantP, wantErr, wantSteps, wantDecided, wantAsked := run(false)
			gotP, gotErr, gotSteps, gotDecided, gotAsked := run(true)
			require.Equal(t, wantErr == nil, gotErr == nil, "%v / %v", wantErr, gotErr)
			if wantErr != nil {
				var want, got *governance.GovernanceDeniedError
				require.ErrorAs(t, wantErr, &want)
				require.ErrorAs(t, gotErr, &got)
				require.Equal(t, [3]string{want.GateID, want.ReasonCode, want.Message}, [3]string{got.GateID, got.ReasonCode, got.Message})
			} else {
				require.Equal(t, wantP.Arguments, gotP.Arguments)
				require.Equal(t, wantP.ArgumentDigest, gotP.ArgumentDigest)
				require.Equal(t, wantP.Rewritten, gotP.Rewritten)
			}
			require.Equal(t, wantSteps, gotSteps)
			require.Equal(t, wantAsked, gotAsked)
			require.Len(t, gotDecided, 1, "the live view hears of the verdict once")
			require.Len(t, wantDecided, 1)
			require.Equal(t, wantDecided[0].Allowed, gotDecided[0].Allowed)
			require.Equal(t, wantDecided[0].ReasonCode, gotDecided[0].ReasonCode)
			require.Equal(t, wantDecided[0].ArgumentDigest, gotDecided[0].ArgumentDigest)
		})
	}
}

// TestAwaitingApproval_FinishAfterTheTaskClosed: a held authorization
// whose task closed before it was finished appends nothing after
// TASK_CLOSED and says the task is closed.
func TestAwaitingApproval_FinishAfterTheTaskClosed(t *testing.T) {
	asked := 0
	e := newEnv(t, []binding{hard("perm", phased(abi.PhaseCheck), "bash")}, func(cfg *controller.Config) {
		cfg.Approvals = func(context.Context, controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			asked++
			return controller.ApprovalDecision{Decision: abi.DecisionAllow}, nil
		}
	})
	task := e.openTask()
	_, w, err := task.AuthorizeUntilApproval(context.Background(), bashCall("make"))
	require.NoError(t, err)
	require.NotNil(t, w)
	_, err = task.Close(context.Background())
	require.NoError(t, err)
	te := e.chainOf(task)
	closed := te.types()
	require.Equal(t, governance.TaskClosed, closed[len(closed)-1])
	_, err = w.Finish(context.Background())
	require.ErrorIs(t, err, controller.ErrTaskClosed)
	require.Equal(t, closed, te.types(), "nothing after TASK_CLOSED")
	require.Empty(t, e.ctl.OpenPermits(task.ChainID()))
}

// TestAwaitingApproval_FinishesWithItsOwnContext: the held authorization
// goes on with the context Finish is given (the server's: the request's
// values without its cancellation), whatever became of the context that
// began it.
func TestAwaitingApproval_FinishesWithItsOwnContext(t *testing.T) {
	type key struct{}
	var seen []any
	e := newEnv(t, []binding{hard("perm", phased(abi.PhaseCheck), "bash"), hard("guard", &fakeGate{fn: func(ctx context.Context, _ abi.GateInput) (abi.GateOutput, error) {
		seen = append(seen, ctx.Value(key{}))
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "ok"}, ctx.Err()
	}}, "bash")}, func(cfg *controller.Config) {
		cfg.Approvals = func(ctx context.Context, _ controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			seen = append(seen, ctx.Value(key{}))
			return controller.ApprovalDecision{Decision: abi.DecisionAllow}, ctx.Err()
		}
	})
	task := e.openTask()
	begun, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "request"))
	_, w, err := task.AuthorizeUntilApproval(begun, bashCall("make"))
	require.NoError(t, err)
	cancel()
	p, err := w.Finish(context.WithValue(context.Background(), key{}, "finish"))
	require.NoError(t, err)
	require.Equal(t, []any{"finish", "finish"}, seen, "the callback and the later gates see Finish's context")
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, evaluated}, e.chainOf(task).types())
	require.NotEmpty(t, p.ID)
}
