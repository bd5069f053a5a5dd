package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// dyingStore is a store whose process "dies": after die, every append
// fails, as appends of a killed server never reach the disk.
type dyingStore struct {
	evidence.Store
	dead atomic.Bool
}

var errDead = errors.New("the process is gone")

func (s *dyingStore) Append(ctx context.Context, r governance.EvidenceRecord) (governance.AppendReceipt, error) {
	if s.dead.Load() {
		return governance.AppendReceipt{}, errDead
	}
	return s.Store.Append(ctx, r)
}

// TestResumeTask_ContinuesAfterARestart: a task of a controller that died
// with one call completed, one authorized and never reported and one
// whose approver was still deciding continues in a second controller on the
// same stores — same task and chain; the lost permit's call is failed
// outcome_lost, the undecided one denied controller.interrupted; the
// permit from before is refused; new calls run; the task closes once and
// mints FULL.
func TestResumeTask_ContinuesAfterARestart(t *testing.T) {
	ctx := context.Background()
	mem := evidence.NewMemStore()
	dying := &dyingStore{Store: mem}
	deciding := make(chan struct{})
	release := make(chan struct{})
	// The undecided call waits on an approver: its records so far are
	// applied before the wait (a call interrupted inside a gate, before its
	// one pre-call batch, leaves no record and needs no terminal one).
	slow := &fakeGate{fn: func(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
		if string(in.Arguments) == `{"command":"slow"}` {
			return abi.GateOutput{Decision: abi.DecisionRequireApproval, ReasonCode: "ask"}, nil
		}
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "ok"}, nil
	}}
	approver := func(c *controller.Config) {
		c.Approvals = func(context.Context, controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			close(deciding)
			<-release
			return controller.ApprovalDecision{Decision: abi.DecisionAllow}, nil
		}
	}
	before := newEnvWithStore(t, dying, []binding{hard("guard", slow)}, approver)
	actor := &governance.ActorRef{Kind: "agent", ID: "claude:s1"}
	task, err := before.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: before.snap.PolicyID(), Version: before.snap.Version(), Actor: actor, Workspace: "/work/project"})
	require.NoError(t, err)
	bash := func(cmd string) controller.Call {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		return controller.Call{Tool: "bash", Arguments: args}
	}
	done, err := task.Authorize(ctx, bash("ls"))
	require.NoError(t, err)
	require.NoError(t, before.ctl.Complete(ctx, done.ID, controller.Outcome{TaskBoundaryID: task.ID()}))
	lost, err := task.Authorize(ctx, bash("make test"))
	require.NoError(t, err)
	undecided := make(chan error, 1)
	go func() { _, err := task.Authorize(ctx, bash("slow")); undecided <- err }()
	<-deciding
	dying.dead.Store(true) // the process dies while the approver decides
	close(release)
	require.ErrorIs(t, <-undecided, errDead)
	keep := task.ResumeOptions()

	// The restarted server: a new controller on the same stores.
	after, err := controller.New(controller.Config{Evidence: mem, Policies: before.policies,
		Gates: controller.GateProviderFunc(func(context.Context, governance.ExecutableGateBinding) (controller.Gate, error) {
			return answer(abi.DecisionAllow, "ok"), nil
		})})
	require.NoError(t, err)
	resumed, res, err := after.ResumeTask(ctx, keep)
	require.NoError(t, err)
	require.Equal(t, task.ID(), resumed.ID())
	require.Equal(t, task.ChainID(), resumed.ChainID())
	require.Equal(t, "/work/project", resumed.Workspace())
	require.Equal(t, []uuid.UUID{lost.OperationID}, res.OutcomeLost)
	// The records of a call held for an approver are applied before the
	// wait (a call whose gates are still running has none yet: they commit
	// in one batch once the gates answer), so the held call is interrupted.
	require.Len(t, res.Interrupted, 1)
	again, res2, err := after.ResumeTask(ctx, keep)
	require.NoError(t, err)
	require.Same(t, resumed, again, "a task open here is returned as it is")
	require.Empty(t, res2.OutcomeLost)

	var pe *controller.PermitError
	require.ErrorAs(t, after.Complete(ctx, lost.ID, controller.Outcome{TaskBoundaryID: task.ID()}), &pe)
	require.ErrorIs(t, pe, controller.ErrPermitUnknown)

	next, err := resumed.Authorize(ctx, bash("go vet"))
	require.NoError(t, err)
	require.NoError(t, after.Complete(ctx, next.ID, controller.Outcome{TaskBoundaryID: task.ID()}))
	b, err := resumed.Close(ctx)
	require.NoError(t, err)
	require.Equal(t, keep.OpenedAt, b.OpenedAt)
	head, err := mem.Head(ctx, task.ChainID())
	require.NoError(t, err)
	cert, err := (&controller.CertificateIssuer{Evidence: mem, Policies: before.policies}).Mint(ctx, b, head.Hash)
	require.NoError(t, err)
	require.Equal(t, governance.GradeFull, cert.ProcessGrade)

	recs, err := mem.Read(ctx, task.ChainID(), -1)
	require.NoError(t, err)
	var failures, denials []string
	for _, r := range recs {
		var p map[string]any
		require.NoError(t, json.Unmarshal([]byte(r.PayloadJSON), &p))
		switch r.RecordType {
		case governance.CallableFailed:
			failures = append(failures, p["failure"].(string))
		case governance.OperationDenied:
			denials = append(denials, p["reason_code"].(string))
		}
	}
	require.Equal(t, []string{controller.FailureOutcomeLost}, failures)
	require.Equal(t, []string{controller.ReasonInterrupted}, denials)

	_, _, err = after.ResumeTask(ctx, keep)
	require.ErrorIs(t, err, controller.ErrTaskClosed, "a closed task is never resumed")
	fresh, err := controller.New(controller.Config{Evidence: mem, Policies: before.policies, Gates: controller.GateProviderFunc(func(context.Context, governance.ExecutableGateBinding) (controller.Gate, error) {
		return answer(abi.DecisionAllow, "ok"), nil
	})})
	require.NoError(t, err)
	_, _, err = fresh.ResumeTask(ctx, keep)
	require.ErrorIs(t, err, controller.ErrTaskClosed, "nor in another process")
}

// TestResumeTask_Refusals: a chain of another task, and missing fields.
func TestResumeTask_Refusals(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, []binding{hard("guard", answer(abi.DecisionAllow, "ok"))})
	task, err := e.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()})
	require.NoError(t, err)
	_, err = task.Authorize(ctx, controller.Call{Tool: "bash", Arguments: []byte(`{"command":"ls"}`)})
	require.NoError(t, err)
	other := task.ResumeOptions()
	other.TaskID = uuid.New()
	fresh, err := controller.New(controller.Config{Evidence: e.store, Policies: e.policies, Gates: controller.GateProviderFunc(func(context.Context, governance.ExecutableGateBinding) (controller.Gate, error) {
		return answer(abi.DecisionAllow, "ok"), nil
	})})
	require.NoError(t, err)
	_, _, err = fresh.ResumeTask(ctx, other)
	require.ErrorIs(t, err, controller.ErrResumeMismatch)
	var ve *governance.ValidationError
	_, _, err = fresh.ResumeTask(ctx, controller.ResumeOptions{TaskID: uuid.New()})
	require.ErrorAs(t, err, &ve)
}

// TestAuthorize_ArgumentsOverTheLimitDeniedBeforeAnyGate: the one limit on
// a call's arguments (abi.MaxArgumentsBytes) is a recorded denial with its
// own reason, and no gate sees the input.
func TestAuthorize_ArgumentsOverTheLimitDeniedBeforeAnyGate(t *testing.T) {
	ctx := context.Background()
	g := answer(abi.DecisionAllow, "ok")
	e := newEnv(t, []binding{hard("guard", g)})
	task, err := e.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()})
	require.NoError(t, err)
	args, _ := json.Marshal(map[string]string{"command": strings.Repeat("a", abi.MaxArgumentsBytes)})
	_, err = task.Authorize(ctx, controller.Call{Tool: "bash", Arguments: args})
	var denied *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &denied)
	require.Equal(t, controller.ReasonTooLarge, denied.ReasonCode)
	require.Contains(t, denied.Message, "1 MiB")
	require.Empty(t, g.calls(), "no gate saw the input")
	_, err = task.Authorize(ctx, controller.Call{Tool: "bash", Arguments: []byte(`{"command":"ls"}`)})
	require.NoError(t, err)
	require.Len(t, g.calls(), 1)
}
