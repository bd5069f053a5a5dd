package controller_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// fakeClock is a settable clock for leases.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func withClock(c *fakeClock) envOption       { return func(cfg *controller.Config) { cfg.Now = c.now } }
func withLease(d time.Duration) envOption {
	return func(cfg *controller.Config) { cfg.PermitLease = d }
}
func (e *env) openTask() *controller.Task { return e.openTaskAs("a1") }
func (e *env) count() int                 { return len(e.records()) }

// chainOf is e looking at the task's chain (records, types, payloads).
func (e *env) chainOf(t *controller.Task) *env {
	return &env{t: e.t, store: e.store, policies: e.policies, ctl: e.ctl, m: e.m, snap: e.snap, task: t.ID(), chain: t.ChainID(), proj: e.proj}
}

func (e *env) openTaskAs(actor string) *controller.Task {
	e.t.Helper()
	task, err := e.ctl.OpenTask(context.Background(), controller.TaskOptions{
		PolicyID: e.snap.PolicyID(), Version: e.snap.Version(), Actor: &governance.ActorRef{Kind: "agent", ID: actor},
	})
	require.NoError(e.t, err)
	return task
}

func bashCall(cmd string) controller.Call {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return controller.Call{Tool: "bash", Arguments: args}
}

func TestAuthorizeComplete_RecordsTheSameSequenceAsInvoke(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, []binding{hard("guard", rmGate())})
	task := e.openTask()
	te := e.chainOf(task)

	p, err := task.Authorize(ctx, bashCall("ls -la"))
	require.NoError(t, err)
	require.Equal(t, "bash", p.Tool)
	require.Equal(t, task.ID(), p.TaskBoundaryID)
	require.Equal(t, task.ChainID(), p.ChainID)
	require.Equal(t, `{"command":"ls -la"}`, string(p.Arguments))
	require.Equal(t, governance.SHA256Hex(p.Arguments), p.ArgumentDigest)
	require.False(t, p.Rewritten, "no gate replaced the arguments")
	require.True(t, p.ExpiresAt.After(p.IssuedAt))
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated}, te.types())
	require.Equal(t, []controller.Permit{p}, e.ctl.OpenPermits(task.ChainID()))

	result := governance.SHA256Hex([]byte("total 0"))
	require.NoError(t, e.ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: task.ID(), ResultDigest: result, Duration: 1500 * time.Microsecond}))
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, completed}, te.types())
	pl := te.payload(3)
	require.Equal(t, result, pl["result_digest"])
	require.Equal(t, p.ArgumentDigest, pl["argument_digest"])
	require.Equal(t, float64(1500), pl["duration_us"])
	require.Equal(t, p.OperationID, te.records()[3].OperationID.UUID)
	require.Empty(t, e.ctl.OpenPermits(task.ChainID()))
	for _, r := range te.records() {
		require.NotContains(t, r.PayloadJSON, "ls -la")
	}

	// The in-process Invoke writes the same record types for the same call.
	opctx, err := task.Context("bash")
	require.NoError(t, err)
	_, err = e.m.Invoke(ctx, bashCall("ls -la"), &opctx)
	require.NoError(t, err)
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, completed, bound, started, evaluated, completed}, te.types())

	b, err := task.Close(ctx)
	require.NoError(t, err)
	head, err := e.store.Head(ctx, task.ChainID())
	require.NoError(t, err)
	ci := &controller.CertificateIssuer{Evidence: e.store, Policies: e.policies}
	cert, err := ci.Mint(ctx, b, head.Hash)
	require.NoError(t, err)
	require.Equal(t, governance.GateSummary{HardAllow: 2}, cert.GateSummary)
}

func TestAuthorize_DenyReturnsNoPermit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, []binding{hard("guard", rmGate())})
	task := e.openTask()
	_, err := task.Authorize(ctx, bashCall("rm -rf /"))
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "destructive.rm_recursive_force", de.ReasonCode)
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, denied}, e.chainOf(task).types())
	require.Empty(t, e.ctl.OpenPermits(task.ChainID()))
}

func TestAuthorize_PermitCarriesTransformedArguments(t *testing.T) {
	rewrite := &fakeGate{fn: func(context.Context, abi.GateInput) (abi.GateOutput, error) {
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "user.rewrite", Arguments: json.RawMessage(`{"command":"ls"}`)}, nil
	}}
	e := newEnv(t, []binding{{id: "rw", level: governance.LevelHard, tools: []string{"bash"}, transform: true, gate: rewrite}, hard("guard", rmGate())})
	task := e.openTask()
	p, err := task.Authorize(context.Background(), bashCall("ls -la"))
	require.NoError(t, err)
	require.Equal(t, `{"command":"ls"}`, string(p.Arguments))
	require.Equal(t, governance.SHA256Hex([]byte(`{"command":"ls"}`)), p.ArgumentDigest)
	require.True(t, p.Rewritten, "the permit says the arguments are not the caller's")
	// A transform that answers the same arguments rewrites nothing.
	p, err = task.Authorize(context.Background(), bashCall("ls"))
	require.NoError(t, err)
	require.False(t, p.Rewritten)
}

func TestAuthorize_WithoutTaskNeedsAValidContext(t *testing.T) {
	e := newEnv(t, []binding{hard("guard", rmGate())})
	_, err := e.ctl.Authorize(context.Background(), bashCall("ls"), nil)
	var be *governance.GovernanceBypassError
	require.ErrorAs(t, err, &be)
	_, err = e.ctl.Authorize(context.Background(), bashCall("ls"), e.opctx("read"))
	require.ErrorAs(t, err, &be)
	require.Zero(t, e.count())

	// A remote tool need not be registered with the manager.
	p, err := e.ctl.Authorize(context.Background(), controller.Call{Tool: "web_fetch", Arguments: json.RawMessage(`{}`)}, e.opctx("web_fetch"))
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de, "no binding applies to web_fetch")
	require.Equal(t, controller.ReasonNoGateBinding, de.ReasonCode)
	require.Empty(t, p.ID)
}

func TestComplete_Refusals_AppendNothing(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	e := newEnv(t, []binding{hard("guard", rmGate())}, withClock(clock), withLease(time.Minute))
	task := e.openTask()
	other := e.openTaskAs("a2")
	te := e.chainOf(task)
	p, err := task.Authorize(ctx, bashCall("ls"))
	require.NoError(t, err)
	n := te.count()

	refused := func(id string, out controller.Outcome, want error) {
		t.Helper()
		err := e.ctl.Complete(ctx, id, out)
		require.ErrorIs(t, err, want)
		require.Equal(t, n, te.count(), "a refused completion appends nothing")
	}
	var pe *controller.PermitError
	refused("not-a-permit", controller.Outcome{TaskBoundaryID: task.ID()}, controller.ErrPermitUnknown)
	refused(p.ID, controller.Outcome{TaskBoundaryID: other.ID()}, controller.ErrPermitWrongTask)
	refused(p.ID, controller.Outcome{TaskBoundaryID: uuid.Nil}, controller.ErrPermitWrongTask)
	require.ErrorAs(t, e.ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: other.ID()}), &pe)
	require.Equal(t, p.OperationID.String(), pe.OperationID)
	require.Contains(t, pe.Error(), p.OperationID.String())

	// Bad outcomes are validation errors and leave the permit usable.
	refused(p.ID, controller.Outcome{TaskBoundaryID: task.ID(), ResultDigest: "abc"}, governance.ErrInvalid)
	refused(p.ID, controller.Outcome{TaskBoundaryID: task.ID(), ErrorClass: "timeout"}, governance.ErrInvalid)
	refused(p.ID, controller.Outcome{TaskBoundaryID: task.ID(), Failed: true, ErrorClass: "Traceback: secret=hunter2"}, governance.ErrInvalid)
	refused(p.ID, controller.Outcome{TaskBoundaryID: task.ID(), Duration: -time.Second}, governance.ErrInvalid)

	require.NoError(t, e.ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: task.ID(), Failed: true, ErrorClass: "timeout"}))
	n = te.count()
	require.Equal(t, failed, te.records()[n-1].RecordType)
	require.Equal(t, "timeout", te.payload(n - 1)["failure"])
	refused(p.ID, controller.Outcome{TaskBoundaryID: task.ID()}, controller.ErrPermitUsed)

	// A lease that ran out.
	late, err := task.Authorize(ctx, bashCall("pwd"))
	require.NoError(t, err)
	n = te.count()
	clock.advance(time.Minute + time.Millisecond)
	refused(late.ID, controller.Outcome{TaskBoundaryID: task.ID()}, controller.ErrPermitExpired)

	// Long after: both are forgotten (the book does not grow without bound).
	clock.advance(time.Hour)
	_, err = task.Authorize(ctx, bashCall("id")) // an issue sweeps the book
	require.NoError(t, err)
	n = te.count()
	refused(p.ID, controller.Outcome{TaskBoundaryID: task.ID()}, controller.ErrPermitUnknown)
	refused(late.ID, controller.Outcome{TaskBoundaryID: task.ID()}, controller.ErrPermitUnknown)
}

func TestComplete_AfterCloseIsRefusedAndMintNamesTheOperation(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, []binding{hard("guard", rmGate())})
	task := e.openTask()
	te := e.chainOf(task)
	p, err := task.Authorize(ctx, bashCall("ls"))
	require.NoError(t, err)
	b, err := task.Close(ctx)
	require.NoError(t, err)
	n := te.count()

	require.ErrorIs(t, e.ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: task.ID()}), controller.ErrPermitTaskClosed)
	require.Equal(t, n, te.count())
	_, err = task.Authorize(ctx, bashCall("ls"))
	require.ErrorIs(t, err, controller.ErrTaskClosed)
	require.Equal(t, n, te.count())

	open := e.ctl.OpenPermits(task.ChainID())
	require.Len(t, open, 1)
	require.Equal(t, p.OperationID, open[0].OperationID)

	head, err := e.store.Head(ctx, task.ChainID())
	require.NoError(t, err)
	ci := &controller.CertificateIssuer{Evidence: e.store, Policies: e.policies}
	_, err = ci.Mint(ctx, b, head.Hash)
	var ce *governance.CertificateError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Reason, p.OperationID.String())
	require.Contains(t, ce.Reason, "never completed")
}

func TestComplete_ConcurrentCompletionsConsumeOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, []binding{hard("guard", rmGate())})
	task := e.openTask()
	p, err := task.Authorize(ctx, bashCall("ls"))
	require.NoError(t, err)
	var ok, used atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := e.ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: task.ID()})
			switch {
			case err == nil:
				ok.Add(1)
			case strings.Contains(err.Error(), controller.ErrPermitUsed.Error()):
				used.Add(1)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, int32(1), ok.Load())
	require.Equal(t, int32(31), used.Load())
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, completed}, e.chainOf(task).types())
}

func TestTask_CloseRacingAuthorizeNeverAppendsAfterTaskClosed(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, []binding{hard("guard", rmGate())})
	for range 20 {
		task := e.openTask()
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if p, err := task.Authorize(ctx, bashCall("ls")); err == nil {
					_ = e.ctl.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: task.ID()})
				}
			}()
		}
		_, err := task.Close(ctx)
		require.NoError(t, err)
		wg.Wait()
		recs := e.chainOf(task).records()
		require.Equal(t, governance.TaskClosed, recs[len(recs)-1].RecordType, "nothing follows TASK_CLOSED")
	}
}
