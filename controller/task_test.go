package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// runTask runs three operations (allowed, denied, allowed) in a task and
// returns its closed boundary and head.
func runTask(t *testing.T, e *env, before func(task *controller.Task)) (governance.ClosedTaskBoundary, string) {
	t.Helper()
	ctx := context.Background()
	b, err := controller.RunTask(ctx, e.ctl, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version(), Actor: &governance.ActorRef{Kind: "agent", ID: "a1"}}, func(task *controller.Task) error {
		if before != nil {
			before(task)
		}
		for _, cmd := range []string{"ls", "rm -rf /", "pwd"} {
			opctx, err := task.Context("bash")
			require.NoError(t, err)
			args, _ := json.Marshal(map[string]string{"command": cmd})
			_, _ = e.m.Invoke(ctx, controller.Call{Tool: "bash", Arguments: args}, &opctx)
		}
		return nil
	})
	require.NoError(t, err)
	head, err := e.store.Head(ctx, b.ChainID)
	require.NoError(t, err)
	return b, head.Hash
}

func rmGate() *fakeGate {
	return &fakeGate{fn: func(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
		if string(in.Arguments) == `{"command":"rm -rf /"}` {
			return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: "destructive.rm_recursive_force"}, nil
		}
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "ok"}, nil
	}}
}

func TestCertificateIssuer_MintsFullFromClosedTask(t *testing.T) {
	e := newEnv(t, []binding{hard("guard", rmGate()), {id: "adv", level: governance.LevelAdvisory, tools: []string{"bash"}, gate: answer(abi.DecisionAllow, "ok")}})
	b, head := runTask(t, e, nil)
	ci := &controller.CertificateIssuer{Evidence: e.store, Policies: e.policies}
	cert, err := ci.Mint(context.Background(), b, head)
	require.NoError(t, err)
	require.Equal(t, governance.GradeFull, cert.ProcessGrade, "recorded denials do not degrade the grade")
	require.Equal(t, governance.GateSummary{HardAllow: 2, HardDeny: 1, AdvisoryAllow: 2}, cert.GateSummary)
	require.Equal(t, head, cert.EvidenceChainHead)
	require.Equal(t, b.TaskBoundaryID, cert.TaskBoundaryID)
}

func TestCertificateIssuer_ExceptionDegrades(t *testing.T) {
	e := newEnv(t, []binding{{id: "soft", level: governance.LevelSoft, tools: []string{"bash"}, gate: rmGate()}})
	b, head := runTask(t, e, func(task *controller.Task) {
		now := time.Now()
		_, err := e.ctl.GrantException(context.Background(), task.ChainID(), governance.ExceptionGrant{
			Actor: governance.ActorRef{Kind: "agent", ID: "a1"}, GateID: "soft", ToolID: "bash",
			PolicyID: e.snap.PolicyID(), PolicyVersion: e.snap.Version(), ReasonCode: "break_glass",
			IssuedAt: now.Add(-time.Second), ExpiresAt: now.Add(time.Minute),
		})
		require.NoError(t, err)
	})
	cert, err := (&controller.CertificateIssuer{Evidence: e.store, Policies: e.policies}).Mint(context.Background(), b, head)
	require.NoError(t, err)
	require.Equal(t, governance.GradeDegraded, cert.ProcessGrade)
	require.Equal(t, 1, cert.GateSummary.ExceptionCount)
	require.Equal(t, 1, cert.GateSummary.SoftDeny)
}

func TestCertificateIssuer_Refusals(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, []binding{hard("guard", rmGate())})
	b, head := runTask(t, e, nil)
	ci := &controller.CertificateIssuer{Evidence: e.store, Policies: e.policies}

	var ce *governance.CertificateError
	_, err := ci.Mint(ctx, b, governance.SHA256Hex([]byte("not the head")))
	require.ErrorAs(t, err, &ce)
	require.Equal(t, governance.BrokenLink, ce.Code)

	other := b
	other.PolicyVersion = "0.0.0"
	_, err = ci.Mint(ctx, other, head)
	require.ErrorAs(t, err, &ce)

	// A policy store that never saw this version.
	_, err = (&controller.CertificateIssuer{Evidence: e.store, Policies: newEnv(t, []binding{hard("g", rmGate())}).policies}).Mint(ctx, b, head)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, governance.MissingPolicy, ce.Code)

	bad := b
	bad.ClosedAt = bad.OpenedAt.Add(-time.Second)
	_, err = ci.Mint(ctx, bad, head)
	require.ErrorAs(t, err, &ce)

	// An open task (no TASK_CLOSED) cannot be minted.
	task, err := e.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()})
	require.NoError(t, err)
	opctx, err := task.Context("bash")
	require.NoError(t, err)
	_, err = e.m.Invoke(ctx, controller.Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}, &opctx)
	require.NoError(t, err)
	h, _ := e.store.Head(ctx, task.ChainID())
	_, err = ci.Mint(ctx, governance.ClosedTaskBoundary{TaskBoundaryID: task.ID(), ChainID: task.ChainID(), PolicyID: e.snap.PolicyID(), PolicyVersion: e.snap.Version(), OpenedAt: time.Now(), ClosedAt: time.Now()}, h.Hash)
	require.ErrorAs(t, err, &ce)
}

func TestCertificateIssuer_MissingTerminalRefused(t *testing.T) {
	ctx := context.Background()
	// An operation whose completion fails to record, then a close.
	fs := &failingStore{Store: evidence.NewMemStore(), failAt: 2} // 1: the pre-call batch
	e2 := newEnvWithStore(t, fs, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	task, err := e2.ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: e2.snap.PolicyID(), Version: e2.snap.Version()})
	require.NoError(t, err)
	opctx, _ := task.Context("bash")
	_, err = e2.m.Invoke(ctx, controller.Call{Tool: "bash"}, &opctx)
	var ge *governance.GovernanceEvidenceError
	require.ErrorAs(t, err, &ge)
	require.True(t, ge.CallExecuted)
	fs.failAt = 1 << 30 // the store recovers
	b, err := task.Close(ctx)
	require.NoError(t, err)
	_, err = task.Close(ctx)
	require.ErrorIs(t, err, controller.ErrTaskClosed)
	_, err = task.Context("bash")
	require.ErrorIs(t, err, controller.ErrTaskClosed)
	h, _ := e2.store.Head(ctx, b.ChainID)
	_, err = (&controller.CertificateIssuer{Evidence: e2.store, Policies: e2.policies}).Mint(ctx, b, h.Hash)
	var ce *governance.CertificateError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Reason, "terminal")
}

func TestRunTask_ClosesOnError(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	boom := errors.New("agent failed")
	b, err := controller.RunTask(context.Background(), e.ctl, controller.TaskOptions{PolicyID: e.snap.PolicyID(), Version: e.snap.Version()}, func(*controller.Task) error { return boom })
	require.ErrorIs(t, err, boom)
	recs, _ := e.store.Read(context.Background(), b.ChainID, -1)
	require.Len(t, recs, 1)
	require.Equal(t, governance.TaskClosed, recs[0].RecordType)
}
