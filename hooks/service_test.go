package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/hooks"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/policy/policyfile"
)

// rig is a real embedded engine (Pebble, the built-in Wasm gates) with the
// workspace policy of the demo: the path guard on the workspace, bash
// behind approval, the destructive guard as a hard gate.
type rig struct {
	eng    *govhost.Engine
	ctl    *controller.InvocationController
	broker *controller.ApprovalBroker
	svc    *hooks.Service
	ws     string
	snap   governance.PolicySnapshot
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedEng != nil {
		_ = sharedEng.Close(context.Background())
		_ = os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

var (
	sharedDir  string
	engineOnce sync.Once
	sharedEng  *govhost.Engine
	sharedSnap governance.PolicySnapshot
	sharedWS   string
	engineErr  error
)

// engine opens one engine for the package's tests (loading the gates is
// the slow part) with the workspace policy active.
func engine(t testing.TB) (*govhost.Engine, governance.PolicySnapshot, string) {
	t.Helper()
	engineOnce.Do(func() {
		dir, err := os.MkdirTemp("", "govhost-hooks-test-")
		if err != nil {
			engineErr = err
			return
		}
		sharedDir = dir
		ws, _ := filepath.EvalSymlinks(filepath.Join(dir))
		ws = filepath.Join(ws, "workspace")
		if engineErr = os.MkdirAll(filepath.Join(ws, "src"), 0o755); engineErr != nil {
			return
		}
		if engineErr = os.WriteFile(filepath.Join(ws, "README.md"), []byte("# demo\n"), 0o644); engineErr != nil {
			return
		}
		ctx := context.Background()
		// One compilation cache for every test run (the host tests' own):
		// compiling the built-in modules is the slow part, under -race most.
		cfg := host.NewConfig().WithCompilationCacheDir(filepath.Join(os.TempDir(), "govhost-test-wazero-cache"))
		sharedEng, engineErr = govhost.Open(ctx, govhost.Options{Dir: filepath.Join(dir, "data"), Host: &cfg})
		if engineErr != nil {
			return
		}
		file, err := policyfile.WorkspaceTemplate(policyfile.WorkspaceOptions{
			PolicyID: uuid.New(), Version: "hooks-1", Root: "/placeholder", RequireBashApproval: true,
		})
		if err != nil {
			engineErr = err
			return
		}
		var doc map[string]any
		_ = json.Unmarshal(file, &doc)
		// One policy for every project: the path guard's root is the
		// task's workspace, which the service takes from the session's cwd.
		doc["gates"].([]any)[0].(map[string]any)["config"].(map[string]any)["root"] = "$workspace"
		doc["gates"] = append(doc["gates"].([]any), map[string]any{
			"gate_id": "destructive", "module": "destructive", "level": "hard", "order": 5, "tool_ids": []string{"bash"},
		})
		file, _ = json.Marshal(doc)
		snap, err := policyfile.Load(file, "hooks-policy.json", sharedEng.Gates.Resolver(ws))
		if err != nil {
			engineErr = err
			return
		}
		if engineErr = sharedEng.Policies.Put(ctx, snap); engineErr != nil {
			return
		}
		sharedSnap, engineErr = sharedEng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), &governance.ActorRef{Kind: "user", ID: "test"}, time.Now())
		sharedWS = ws
	})
	require.NoError(t, engineErr)
	return sharedEng, sharedSnap, sharedWS
}

func newRig(t testing.TB, mode hooks.ApprovalMode) *rig {
	t.Helper()
	eng, snap, ws := engine(t)
	broker := controller.NewApprovalBroker(false)
	t.Cleanup(broker.Close)
	ctl, err := eng.NewController(controller.Config{Approvals: hooks.ApprovalCallback(broker.Callback(), nil)})
	require.NoError(t, err)
	svc, err := hooks.New(hooks.Config{
		Controller: ctl,
		TaskOptions: func(ctx context.Context, ev agents.Event) (controller.TaskOptions, error) {
			return controller.TaskOptions{PolicyID: snap.PolicyID(), Version: snap.Version(),
				Actor: &governance.ActorRef{Kind: "agent", ID: string(ev.Agent) + ":" + ev.SessionID}}, nil
		},
		Certify: func(ctx context.Context, b governance.ClosedTaskBoundary) (governance.TaskCertificate, error) {
			head, err := eng.Evidence.Head(ctx, b.ChainID)
			if err != nil {
				return governance.TaskCertificate{}, err
			}
			return eng.Issuer().Mint(ctx, b, head.Hash)
		},
		Approval: mode,
		Sessions: eng.Sessions,
	})
	require.NoError(t, err)
	return &rig{eng: eng, ctl: ctl, broker: broker, svc: svc, ws: ws, snap: snap}
}

// claudeEvent builds a Claude Code hook input of the documented shape.
func claudeEvent(session, cwd, event string, fields map[string]any) []byte {
	m := map[string]any{"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "permission_mode": "default", "hook_event_name": event}
	for k, v := range fields {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

func pre(tool, id string, input map[string]any) map[string]any {
	return map[string]any{"tool_name": tool, "tool_use_id": id, "tool_input": input}
}

func post(tool, id string, input map[string]any, response any) map[string]any {
	return map[string]any{"tool_name": tool, "tool_use_id": id, "tool_input": input, "tool_response": response}
}

func decision(t *testing.T, res hooks.Result) string {
	t.Helper()
	require.False(t, res.Refused(), "%s: %v", res.Code, res.Err)
	var body struct {
		Out struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal(res.Answer.Body, &body))
	if body.Out.Decision == "" {
		return "none"
	}
	return body.Out.Decision
}

func (r *rig) records(t *testing.T, chain uuid.UUID) []governance.EvidenceRecord {
	t.Helper()
	recs, err := r.eng.Evidence.Read(context.Background(), chain, -1)
	require.NoError(t, err)
	return recs
}

func TestService_ClaudeSession(t *testing.T) {
	r := newRig(t, hooks.ApprovalAsk)
	ctx := context.Background()
	sid := "claude-" + uuid.NewString()
	h := func(event string, fields map[string]any) hooks.Result {
		return r.svc.Handle(ctx, agents.Claude, "", claudeEvent(sid, r.ws, event, fields))
	}
	readme := filepath.Join(r.ws, "README.md")

	require.Equal(t, "none", decision(t, h("SessionStart", map[string]any{"source": "startup"})))

	// An allowed read: no opinion, the agent's own rules still apply.
	res := h("PreToolUse", pre("Read", "toolu_1", map[string]any{"file_path": readme}))
	require.Equal(t, "none", decision(t, res))
	require.Equal(t, agents.Allow, res.Verdict.Decision)
	require.False(t, h("PostToolUse", post("Read", "toolu_1", map[string]any{"file_path": readme}, map[string]any{"content": "# demo"})).Refused())

	// Outside the workspace: the path guard's message is the reason.
	res = h("PreToolUse", pre("Read", "toolu_2", map[string]any{"file_path": "/etc/passwd"}))
	require.Equal(t, "deny", decision(t, res))
	require.Equal(t, "path.outside_root", res.Verdict.ReasonCode)
	require.Contains(t, string(res.Answer.Body), "/etc/passwd")

	// The destructive guard.
	res = h("PreToolUse", pre("Bash", "toolu_3", map[string]any{"command": "rm -rf / --no-preserve-root"}))
	require.Equal(t, "deny", decision(t, res))
	require.Equal(t, "destructive.rm_recursive_force", res.Verdict.ReasonCode)
	require.Equal(t, 2, res.Answer.Exit)

	// bash requires approval: ask mode hands it to Claude Code's prompt.
	res = h("PreToolUse", pre("Bash", "toolu_4", map[string]any{"command": "go test ./..."}))
	require.Equal(t, "ask", decision(t, res))
	require.False(t, h("PostToolUse", post("Bash", "toolu_4", map[string]any{"command": "go test ./..."}, map[string]any{"stdout": "ok", "stderr": "", "interrupted": false, "isImage": false})).Refused())

	// A write to a new file is create_file; it fails in the agent.
	newFile := filepath.Join(r.ws, "src", "new.go")
	res = h("PreToolUse", pre("Write", "toolu_5", map[string]any{"file_path": newFile, "content": "package src"}))
	require.Equal(t, "none", decision(t, res))
	require.False(t, h("PostToolUseFailure", map[string]any{"tool_name": "Write", "tool_use_id": "toolu_5", "tool_input": map[string]any{"file_path": newFile}, "error": "disk full", "is_interrupt": false}).Refused())

	// Authorized, then never reported: completed as no_outcome at the end.
	res = h("PreToolUse", pre("Edit", "toolu_6", map[string]any{"file_path": readme, "old_string": "demo", "new_string": "x"}))
	require.Equal(t, "none", decision(t, res))

	sess := r.openTask(t, sid)
	before := len(r.records(t, sess))

	// A replayed tool_use_id: refused, nothing appended.
	res = h("PreToolUse", pre("Read", "toolu_1", map[string]any{"file_path": readme}))
	require.Equal(t, "deny", decision(t, res))
	require.Equal(t, hooks.ReasonReplayedToolUse, res.Verdict.ReasonCode)
	// A PostToolUse with no permit: 409, nothing appended.
	res = h("PostToolUse", post("Read", "toolu_99", map[string]any{"file_path": readme}, "x"))
	require.Equal(t, hooks.CodeNoPendingCall, res.Code)
	// Completing the same call twice.
	res = h("PostToolUse", post("Read", "toolu_1", map[string]any{"file_path": readme}, "x"))
	require.Equal(t, hooks.CodeNoPendingCall, res.Code)
	// Malformed and missing tool_name: 400, nothing appended.
	res = r.svc.Handle(ctx, agents.Claude, "", []byte(`{"session_id":"`+sid+`","hook_event_name":"PreToolUse"`))
	require.Equal(t, hooks.CodeMalformed, res.Code)
	res = h("PreToolUse", map[string]any{"tool_input": map[string]any{"command": "ls"}})
	require.Equal(t, hooks.CodeMissingField, res.Code)
	require.Len(t, r.records(t, sess), before, "refused events append nothing")

	res = h("SessionEnd", map[string]any{"reason": "other"})
	require.False(t, res.Refused(), "%s: %v", res.Code, res.Err)
	require.NotNil(t, res.Ended)
	require.Equal(t, 1, res.Ended.Unreported)
	require.Empty(t, res.Ended.CertifyError)
	require.NotNil(t, res.Ended.Certificate)
	recs := r.records(t, sess)
	head, err := r.eng.Evidence.Head(ctx, sess)
	require.NoError(t, err)
	require.True(t, evidence.VerifyRecords(recs, head.Hash).Valid)

	// What the chain says: the tool_response never, its digest yes; the
	// failed and unreported calls as CALLABLE_FAILED with their class.
	classes := map[string]int{}
	for _, rec := range recs {
		text, _ := json.Marshal(rec)
		require.NotContains(t, string(text), "# demo", "a tool response is never recorded")
		if rec.RecordType == governance.CallableFailed {
			var p map[string]any
			require.NoError(t, json.Unmarshal([]byte(rec.PayloadJSON), &p))
			classes[fmt.Sprint(p["failure"])]++
		}
	}
	require.Equal(t, map[string]int{"tool_error": 1, "no_outcome": 1}, classes)
	ended, ok := r.svc.Session(agents.Claude, sid)
	require.True(t, ok)
	require.Equal(t, res.Ended, ended)
	require.Zero(t, r.svc.Open())
}

// openTask finds the chain of the session's task from the controller's
// open permits or the ended record.
func (r *rig) openTask(t *testing.T, sid string) uuid.UUID {
	t.Helper()
	id, ok := r.svc.ChainOf(agents.Claude, sid)
	require.True(t, ok)
	return id
}

func TestService_HoldOnTheBroker(t *testing.T) {
	r := newRig(t, hooks.ApprovalHold)
	ctx := context.Background()
	sid := "codex-" + uuid.NewString()
	ev := func(event string, fields map[string]any) []byte {
		m := map[string]any{"session_id": sid, "turn_id": "t1", "transcript_path": nil, "cwd": r.ws, "hook_event_name": event, "model": "gpt-5.5", "permission_mode": "default"}
		for k, v := range fields {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return b
	}
	go func() {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			for _, p := range r.broker.Pending() {
				d := abi.DecisionDeny
				if p.Request.Arguments != nil && json.Valid(p.Request.Arguments) && string(p.Request.Arguments) == `{"command":"go test ./..."}` {
					d = abi.DecisionAllow
				}
				r.broker.Resolve(p.ID, d, &governance.ActorRef{Kind: "user", ID: "reviewer"})
			}
		}
	}()
	res := r.svc.Handle(ctx, agents.Codex, "", ev("PreToolUse", pre("Bash", "call_1", map[string]any{"command": "go test ./..."})))
	require.False(t, res.Refused(), "%s: %v", res.Code, res.Err)
	require.Equal(t, agents.Allow, res.Verdict.Decision, "the reviewer approved")
	require.JSONEq(t, `{}`, string(res.Answer.Body), "Codex honours no explicit allow")
	res = r.svc.Handle(ctx, agents.Codex, "", ev("PreToolUse", pre("Bash", "call_2", map[string]any{"command": "curl example.com"})))
	require.Equal(t, agents.Deny, res.Verdict.Decision, "the reviewer rejected")
	require.Equal(t, "approval.required", res.Verdict.ReasonCode)
	require.Equal(t, 2, res.Answer.Exit)
	require.False(t, r.svc.Handle(ctx, agents.Codex, "", ev("PostToolUse", post("Bash", "call_1", map[string]any{"command": "go test ./..."}, "ok"))).Refused())
	res = r.svc.Handle(ctx, agents.Codex, "", ev("Stop", map[string]any{"stop_hook_active": false}))
	require.NotNil(t, res.Ended)
	require.NotNil(t, res.Ended.Certificate, res.Ended.CertifyError)
}
