package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

func hard(id string, g controller.Gate, tools ...string) binding {
	if len(tools) == 0 {
		tools = []string{"bash", "read", "boom", "fail"}
	}
	return binding{id: id, level: governance.LevelHard, tools: tools, gate: g}
}

func TestInvoke_AllowRunsToolOnceAndRecords(t *testing.T) {
	g := answer(abi.DecisionAllow, "ok")
	e := newEnv(t, []binding{hard("g1", g)})
	res, err := e.invoke("bash", `{"command":"ls -la","secret":"hunter2"}`)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"command": "ls -la", "secret": "hunter2"}, res)
	require.Equal(t, int64(1), e.calls.Load())
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, completed}, e.types())
	e.requireVerifies()

	in := g.calls()[0]
	require.Equal(t, abi.PhaseCheck, in.Phase)
	require.Equal(t, `{"command":"ls -la","secret":"hunter2"}`, string(in.Arguments))
	require.Equal(t, []string{"command", "secret"}, in.ArgumentOrder)
	require.Equal(t, "coder", in.Context.Actor.ID)

	p := e.payload(2)
	require.Equal(t, "g1", p["gate_id"])
	require.Equal(t, "hard", p["level"])
	require.Equal(t, "allow", p["decision"])
	require.Equal(t, "check", p["phase"])
	require.Equal(t, governance.SHA256Hex([]byte("g1")), p["module_digest"])
	require.Equal(t, []any{"command", "secret"}, e.payload(1)["fields"])
	require.Equal(t, e.snap.Digest(), e.payload(0)["policy_digest"])
	for _, r := range e.records() {
		require.NotContains(t, r.PayloadJSON, "hunter2", "raw argument values never reach evidence")
		require.NotContains(t, r.PayloadJSON, "ls -la")
	}
}

func TestInvoke_HardDenyBlocks(t *testing.T) {
	after := answer(abi.DecisionAllow, "ok")
	e := newEnv(t, []binding{hard("guard", answer(abi.DecisionDeny, "destructive.rm_recursive_force")), hard("later", after)})
	op := e.opctx("bash")
	_, err := e.m.Invoke(context.Background(), controller.Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"rm -rf /"}`)}, op)
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "bash", de.Function)
	require.Equal(t, op.OperationID.String(), de.OperationID)
	require.Equal(t, "destructive.rm_recursive_force", de.ReasonCode)
	require.Equal(t, "guard", de.GateID)
	require.Equal(t, "msg:destructive.rm_recursive_force", de.Message)
	require.Zero(t, e.calls.Load())
	require.Empty(t, after.calls(), "evaluation stops at a blocking deny")
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, denied}, e.types())
	require.Equal(t, "destructive.rm_recursive_force", e.payload(3)["reason_code"])
	e.requireVerifies()
}

func TestInvoke_AdvisoryDenyProceeds(t *testing.T) {
	e := newEnv(t, []binding{{id: "adv", level: governance.LevelAdvisory, tools: []string{"bash"}, gate: answer(abi.DecisionDeny, "style.long_command")}})
	_, err := e.invoke("bash", `{"command":"ls"}`)
	require.NoError(t, err)
	require.Equal(t, int64(1), e.calls.Load())
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, completed}, e.types())
	require.Equal(t, "deny", e.payload(2)["decision"], "advisory never turns into allow in the record")
	require.Equal(t, "advisory", e.payload(2)["level"])
}

func TestInvoke_SoftDenyNeedsExceptionGrant(t *testing.T) {
	e := newEnv(t, []binding{{id: "soft", level: governance.LevelSoft, tools: []string{"bash"}, gate: answer(abi.DecisionDeny, "path.outside_root")}})
	_, err := e.invoke("bash", `{"command":"cat /etc/hosts"}`)
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de)

	now := time.Now()
	grant := governance.ExceptionGrant{
		Actor: governance.ActorRef{Kind: "agent", ID: "coder"}, GateID: "soft", ToolID: "bash",
		PolicyID: e.snap.PolicyID(), PolicyVersion: e.snap.Version(), ReasonCode: "incident.42",
		IssuedAt: now.Add(-time.Second), ExpiresAt: now.Add(time.Hour),
	}
	// A grant for another gate, for another actor, or an expired grant does not help.
	other := grant
	other.GateID = "other"
	_, err = e.ctl.GrantException(context.Background(), e.chain, other)
	require.NoError(t, err)
	otherActor := grant
	otherActor.Actor = governance.ActorRef{Kind: "agent", ID: "someone-else"}
	_, err = e.ctl.GrantException(context.Background(), e.chain, otherActor)
	require.NoError(t, err)
	expired := grant
	expired.IssuedAt, expired.ExpiresAt = now.Add(-2*time.Hour), now.Add(-time.Hour)
	_, err = e.ctl.GrantException(context.Background(), e.chain, expired)
	require.NoError(t, err)
	_, err = e.invoke("bash", `{"command":"cat /etc/hosts"}`)
	require.ErrorAs(t, err, &de)

	g, err := e.ctl.GrantException(context.Background(), e.chain, grant)
	require.NoError(t, err)
	_, err = e.invoke("bash", `{"command":"cat /etc/hosts"}`)
	require.NoError(t, err)
	require.Equal(t, int64(1), e.calls.Load())
	recs := e.records()
	last := len(recs) - 1
	require.Equal(t, completed, recs[last].RecordType)
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(recs[last-1].PayloadJSON), &p))
	require.Equal(t, "deny", p["decision"])
	require.Equal(t, g.GrantID.String(), p["exception_grant_id"])

	// The grant is single use.
	_, err = e.invoke("bash", `{"command":"cat /etc/hosts"}`)
	require.ErrorAs(t, err, &de)
	e.requireVerifies()
	var grants int
	for _, r := range e.records() {
		if r.RecordType == governance.ExceptionGranted {
			grants++
		}
	}
	require.Equal(t, 4, grants)
}

func TestInvoke_TransformThenRecheck(t *testing.T) {
	check := &fakeGate{fn: func(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
		if strings.Contains(string(in.Arguments), "sudo") {
			return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: "permission.denied_by_rule"}, nil
		}
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "permission.allowed_by_rule"}, nil
	}}
	rewrite := func(to string) *fakeGate {
		return &fakeGate{fn: func(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
			return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "user.rewrite", Arguments: json.RawMessage(`{"command":"` + to + `"}`)}, nil
		}}
	}
	t.Run("rewrite passes recheck", func(t *testing.T) {
		e := newEnv(t, []binding{hard("perm", check, "bash"), {id: "user", level: governance.LevelHard, tools: []string{"bash"}, transform: true, gate: rewrite("ls -l")}})
		res, err := e.invoke("bash", `{"command":"ls"}`)
		require.NoError(t, err)
		require.Equal(t, map[string]any{"command": "ls -l"}, res, "the callable gets the final arguments")
		calls := check.calls()
		require.Len(t, calls, 2)
		require.Equal(t, abi.PhaseCheck, calls[0].Phase)
		require.Equal(t, abi.PhaseRecheck, calls[1].Phase)
		require.Equal(t, `{"command":"ls -l"}`, string(calls[1].Arguments))
		require.Equal(t, []governance.EvidenceType{bound, started, evaluated, evaluated, evaluated, completed}, e.types())
		require.Equal(t, "recheck", e.payload(4)["phase"])
		require.NotEqual(t, e.payload(2)["argument_digest"], e.payload(4)["argument_digest"])
		require.Equal(t, e.payload(3)["output_argument_digest"], e.payload(4)["argument_digest"])
	})
	t.Run("rewrite denied on recheck", func(t *testing.T) {
		check.inputs = nil
		e := newEnv(t, []binding{hard("perm", check, "bash"), {id: "user", level: governance.LevelHard, tools: []string{"bash"}, transform: true, gate: rewrite("sudo rm x")}})
		_, err := e.invoke("bash", `{"command":"ls"}`)
		var de *governance.GovernanceDeniedError
		require.ErrorAs(t, err, &de)
		require.Equal(t, "perm", de.GateID)
		require.Zero(t, e.calls.Load())
		require.Equal(t, "recheck", e.payload(5)["phase"])
	})
	t.Run("check gate cannot rewrite", func(t *testing.T) {
		e := newEnv(t, []binding{hard("notransform", rewrite("rm -rf /"), "bash")})
		res, err := e.invoke("bash", `{"command":"ls"}`)
		require.NoError(t, err)
		require.Equal(t, map[string]any{"command": "ls"}, res)
	})
}

func TestInvoke_Approvals(t *testing.T) {
	escalate := func() *fakeGate { return answer(abi.DecisionRequireApproval, "permission.escalate") }
	approver := &governance.ActorRef{Kind: "user", ID: "reviewer"}
	decidedAt := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		cb      controller.ApprovalCallback
		allowed bool
		outcome string
	}{
		"approved": {func(ctx context.Context, r controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			return controller.ApprovalDecision{Decision: abi.DecisionAllow, Approver: approver, DecidedAt: decidedAt}, nil
		}, true, "approved"},
		"rejected": {func(ctx context.Context, r controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			return controller.ApprovalDecision{Decision: abi.DecisionDeny, Approver: approver, DecidedAt: decidedAt}, nil
		}, false, "rejected"},
		"asked again": {func(ctx context.Context, r controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			return controller.ApprovalDecision{Decision: abi.DecisionRequireApproval}, nil
		}, false, "rejected"},
		"callback fails": {func(ctx context.Context, r controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			return controller.ApprovalDecision{}, errors.New("broker down")
		}, false, "failed"},
		"no callback": {nil, false, "unavailable"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, []binding{hard("perm", escalate())}, func(cfg *controller.Config) { cfg.Approvals = c.cb })
			_, err := e.invoke("bash", `{"command":"make deploy"}`)
			p := e.payload(2)
			require.Equal(t, c.outcome, p["approval"])
			require.Equal(t, "require_approval", p["gate_decision"])
			if c.allowed {
				require.NoError(t, err)
				require.Equal(t, "allow", p["decision"])
				require.Equal(t, "reviewer", p["approver_id"])
				require.Equal(t, "2026-11-29T12:00:00.000000Z", p["approval_decided_at"])
				return
			}
			var de *governance.GovernanceDeniedError
			require.ErrorAs(t, err, &de)
			require.Equal(t, controller.ReasonApprovalRequired, de.ReasonCode)
			require.Zero(t, e.calls.Load())
		})
	}
}

func TestInvoke_NoApplicableBinding(t *testing.T) {
	e := newEnv(t, []binding{hard("only-bash", answer(abi.DecisionAllow, "ok"), "bash")})
	_, err := e.invoke("read", `{"path":"a.txt"}`)
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de)
	require.Equal(t, controller.ReasonNoGateBinding, de.ReasonCode)
	require.Equal(t, []governance.EvidenceType{bound, started, denied}, e.types())
}

func TestInvoke_PolicyMissingOrMismatchedDeniesBeforeGates(t *testing.T) {
	g := answer(abi.DecisionAllow, "ok")
	e := newEnv(t, []binding{hard("g", g)})
	op := e.opctx("bash")
	op.PolicyDigest = governance.SHA256Hex([]byte("another policy"))
	_, err := e.m.Invoke(context.Background(), controller.Call{Tool: "bash", Arguments: json.RawMessage(`{}`)}, op)
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de)
	require.Equal(t, controller.ReasonPolicyMismatch, de.ReasonCode)
	require.Empty(t, g.calls())
	require.Equal(t, []governance.EvidenceType{started, denied}, e.types())

	// A manager pinned to a version the store never saw.
	e2 := newEnv(t, []binding{hard("g", g)})
	m := controller.NewManager()
	ctl, err := controller.New(controller.Config{Evidence: e2.store, Policies: e2.policies, Gates: controller.GateProviderFunc(func(context.Context, governance.ExecutableGateBinding) (controller.Gate, error) { return g, nil })})
	require.NoError(t, err)
	require.NoError(t, m.Register(controller.Tool{ID: "bash", Fn: e2.echo}))
	require.NoError(t, m.Govern(ctl, controller.PolicyPin{PolicyID: e2.snap.PolicyID(), Version: "9.9.9"}))
	op = e2.opctx("bash")
	op.PolicyVersion = "9.9.9"
	_, err = m.Invoke(context.Background(), controller.Call{Tool: "bash"}, op)
	require.ErrorAs(t, err, &de)
	require.Equal(t, controller.ReasonPolicyNotFound, de.ReasonCode)
	require.Empty(t, g.calls())
	require.Zero(t, e2.calls.Load())
}

func TestInvoke_GateFailuresDenyAsEvaluatorError(t *testing.T) {
	cases := map[string]*fakeGate{
		"gate error": {fn: func(context.Context, abi.GateInput) (abi.GateOutput, error) {
			return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: "gate.trap", Detail: "guest panic: secret"}, errors.New("trap")
		}},
		"decision outside the set": {fn: func(context.Context, abi.GateInput) (abi.GateOutput, error) {
			return abi.GateOutput{Decision: "maybe", ReasonCode: "x"}, nil
		}},
		"deadline": {fn: func(ctx context.Context, in abi.GateInput) (abi.GateOutput, error) {
			<-ctx.Done()
			return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "late"}, nil
		}},
	}
	for name, g := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, []binding{hard("g", g)})
			ctx := context.Background()
			if name == "deadline" {
				// NB: only this case may meet the deadline: on a loaded
				// machine 50 ms can pass before another case's gate runs.
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
			}
			_, err := e.m.Invoke(ctx, controller.Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}, e.opctx("bash"))
			var de *governance.GovernanceDeniedError
			require.ErrorAs(t, err, &de)
			require.Equal(t, controller.ReasonEvaluatorError, de.ReasonCode)
			require.Equal(t, []governance.EvidenceType{bound, started, evaluated, denied}, e.types(), "records are written even after the caller's deadline")
			for _, r := range e.records() {
				require.NotContains(t, r.PayloadJSON, "secret")
			}
			e.requireVerifies()
		})
	}
}

func TestInvoke_BadInput(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	for _, args := range []string{`[1,2]`, `"rm -rf"`, `{"a":`, `null`} {
		_, err := e.invoke("bash", args)
		require.Error(t, err, args)
	}
	_, err := e.invoke("bash", `[1]`)
	require.ErrorIs(t, err, controller.ErrArgumentsNotObject)
	require.Empty(t, e.types(), "nothing recorded for malformed requests")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = e.m.Invoke(ctx, controller.Call{Tool: "bash"}, e.opctx("bash"))
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, e.types())

	_, err = e.invoke("nope", `{}`)
	require.ErrorIs(t, err, controller.ErrToolNotFound)
}

func TestInvoke_FloatArgumentsReachTheToolButNotEvidence(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	res, err := e.invoke("bash", `{"timeout":1.5,"command":"sleep 1"}`)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"timeout": 1.5, "command": "sleep 1"}, res)
}

func TestInvoke_CallablePanicIsRecordedAndReturned(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	require.NoError(t, e.m.Register(controller.Tool{ID: "boom", Fn: func(context.Context, map[string]any) (any, error) { panic("kaboom") }}))
	op := e.opctx("boom")
	_, err := e.m.Invoke(context.Background(), controller.Call{Tool: "boom"}, op)
	var pe *controller.PanicError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, controller.ErrCallablePanicked)
	require.Equal(t, "kaboom", pe.Value)
	require.Equal(t, []governance.EvidenceType{bound, started, evaluated, failed}, e.types())
	require.Equal(t, "panic", e.payload(3)["failure"])
}

func TestInvoke_CallableErrorIsReturnedUnchanged(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	toolErr := errors.New("disk quota")
	require.NoError(t, e.m.Register(controller.Tool{ID: "fail", Fn: func(context.Context, map[string]any) (any, error) { return nil, toolErr }}))
	_, err := e.m.Invoke(context.Background(), controller.Call{Tool: "fail"}, e.opctx("fail"))
	require.Equal(t, toolErr, err)
	require.Equal(t, "error", e.payload(3)["failure"])
}

func TestManager_UnboundToolsKeepThePlainPath(t *testing.T) {
	m := controller.NewManager()
	calls := 0
	require.NoError(t, m.Register(controller.Tool{ID: "plain", Fn: func(_ context.Context, args map[string]any) (any, error) {
		calls++
		return args["x"], nil
	}}))
	res, err := m.Invoke(context.Background(), controller.Call{Tool: "plain", Arguments: json.RawMessage(`{"x":"y"}`)}, nil)
	require.NoError(t, err)
	require.Equal(t, "y", res)
	res, err = m.CallTool(context.Background(), "plain", nil, map[string]any{"x": "z"})
	require.NoError(t, err)
	require.Equal(t, "z", res)
	require.Equal(t, 2, calls)
	_, ok := m.Pin()
	require.False(t, ok)
}

func TestManager_RegistrationBindsToThePin(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	pin, ok := e.m.Pin()
	require.True(t, ok)
	other := controller.PolicyPin{PolicyID: uuid.New(), Version: "1"}
	err := e.m.Register(controller.Tool{ID: "conflict", Fn: e.echo, Binding: &other})
	require.ErrorIs(t, err, controller.ErrBindingConflict)
	require.NoError(t, e.m.Register(controller.Tool{ID: "same", Fn: e.echo, Binding: &pin}))
	require.ErrorIs(t, e.m.Register(controller.Tool{ID: "same", Fn: e.echo}), controller.ErrToolExists)
	require.ErrorIs(t, e.m.Govern(e.ctl, pin), controller.ErrAlreadyGoverned)
	// "read" was registered after Govern: it is governed too.
	_, err = e.m.Invoke(context.Background(), controller.Call{Tool: "read"}, nil)
	var be *governance.GovernanceBypassError
	require.ErrorAs(t, err, &be)

	m := controller.NewManager()
	require.NoError(t, m.Register(controller.Tool{ID: "pinned", Fn: e.echo, Binding: &other}))
	require.ErrorIs(t, m.Govern(e.ctl, pin), controller.ErrBindingConflict)
}

func TestInvoke_PathFactsReachGates(t *testing.T) {
	g := answer(abi.DecisionAllow, "ok")
	var names [][]string
	resolver := func(cwd string, args map[string]any, order []string, pathArgs []string) (string, []abi.PathFact, error) {
		names = append(names, pathArgs)
		if args["path"] == "loop" {
			return "", nil, errors.New("symlink loop")
		}
		return "/real" + cwd, []abi.PathFact{{Arg: "path", Raw: args["path"].(string), Resolved: "/real/x", Exists: true, Kind: abi.PathKindFile, NearestExisting: "/real"}}, nil
	}
	e := newEnv(t, []binding{hard("paths", g)}, func(c *controller.Config) { c.PathFacts = resolver })
	_, err := e.m.Invoke(context.Background(), controller.Call{Tool: "read", Arguments: json.RawMessage(`{"path":"x"}`), Cwd: "/link"}, e.opctx("read"))
	require.NoError(t, err)
	in := g.calls()[0]
	require.Equal(t, "/real/link", in.Cwd, "gates see the resolved cwd")
	require.Equal(t, "/real/x", in.Paths[0].Resolved)

	// A path that cannot be resolved fails closed.
	_, err = e.m.Invoke(context.Background(), controller.Call{Tool: "read", Arguments: json.RawMessage(`{"path":"loop"}`), Cwd: "/link"}, e.opctx("read"))
	var de *governance.GovernanceDeniedError
	require.ErrorAs(t, err, &de)
	require.Equal(t, controller.ReasonEvaluatorError, de.ReasonCode)
	require.Len(t, g.calls(), 1, "the gate is not asked without facts")

	// The call's path argument names reach the resolver.
	_, err = e.m.Invoke(context.Background(), controller.Call{Tool: "read", Arguments: json.RawMessage(`{"path":"x"}`), Cwd: "/link", PathArgs: []string{"source", "paths[]"}}, e.opctx("read"))
	require.NoError(t, err)
	require.Equal(t, [][]string{nil, nil, {"source", "paths[]"}}, names)
}

// TestInvoke_ApproverReplacesArguments: an approver may answer with new
// arguments (ADR-0086's escalation rule); every check gate runs again on
// them, and the gate that asked is not asked again for the same arguments.
func TestInvoke_ApproverReplacesArguments(t *testing.T) {
	escalate := &fakeGate{fn: func(context.Context, abi.GateInput) (abi.GateOutput, error) {
		return abi.GateOutput{Decision: abi.DecisionRequireApproval, ReasonCode: "permission.escalate", Message: "approval required"}, nil
	}}
	guard := &fakeGate{fn: func(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
		if strings.Contains(string(in.Arguments), "rm -rf") {
			return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: "destructive.rm_recursive_force", Message: "no"}, nil
		}
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "destructive.none"}, nil
	}}
	for _, c := range []struct {
		name, replacement string
		allowed           bool
	}{
		{"narrowed", `{"command":"make deploy --dry-run"}`, true},
		{"made dangerous", `{"command":"rm -rf /"}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			escalate.inputs, guard.inputs = nil, nil
			asked := 0
			cb := func(ctx context.Context, r controller.ApprovalRequest) (controller.ApprovalDecision, error) {
				asked++
				return controller.ApprovalDecision{Decision: abi.DecisionAllow, Arguments: json.RawMessage(c.replacement)}, nil
			}
			e := newEnv(t, []binding{hard("perm", escalate, "bash"), hard("guard", guard, "bash")}, func(cfg *controller.Config) { cfg.Approvals = cb })
			res, err := e.invoke("bash", `{"command":"make deploy"}`)
			require.Equal(t, 1, asked, "the approver is asked once")
			// The approval came from the first gate: every later gate already
			// sees the replacement.
			require.JSONEq(t, c.replacement, string(guard.calls()[0].Arguments))
			if !c.allowed {
				var de *governance.GovernanceDeniedError
				require.ErrorAs(t, err, &de)
				require.Equal(t, "guard", de.GateID)
				require.Zero(t, e.calls.Load())
				return
			}
			require.Len(t, guard.calls(), 2, "and the recheck phase runs every check gate again")
			require.Equal(t, abi.PhaseRecheck, guard.calls()[1].Phase)
			require.NoError(t, err)
			var want map[string]any
			require.NoError(t, json.Unmarshal([]byte(c.replacement), &want))
			require.Equal(t, want, res, "the tool runs with the approver's arguments")
			p := e.payload(2)
			require.Equal(t, "approved", p["approval"])
			require.NotEmpty(t, p["output_argument_digest"])
			require.Equal(t, "approved_earlier", e.payload(4)["approval"])
			e.requireVerifies()
		})
	}
}
