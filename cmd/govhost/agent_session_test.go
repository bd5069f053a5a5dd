package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/policyfile"
)

// sessionCall is one tool call of the recorded session and what the agent
// must be told.
type sessionCall struct {
	tool   string
	input  map[string]any
	answer string // "allow", "deny"
	reason string // the deny's reason code, when it matters
	failed bool   // the tool fails in the agent (PostToolUseFailure)
}

// TestAgentSession_FiftyCallsOneCertificate runs a Claude Code session of
// 50 mixed tool calls through the command hook (`govhost hook`, in
// process) and the real sidecar (`govhost serve` as a process, its gates
// and Pebble): a destructive command is denied by the destructive guard, bash
// calls are held on the approval broker (one approved, one rejected), and
// the session ends with one certificate whose chain `govhost chain
// verify` accepts.
func TestAgentSession_FiftyCallsOneCertificate(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "README.md"), []byte("# project\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644))

	// The real sidecar: `govhost serve` as a process, with the agents'
	// policy and approvals held on its broker.
	policyFile := filepath.Join(t.TempDir(), "agents-policy.json")
	must(t, os.WriteFile(policyFile, agentPolicyFile(t), 0o644))
	srv := startServe(t, data, "--policy", policyFile, "--hook-approval", "hold")
	tokenFile := filepath.Join(data, "token")

	// The reviewer, through the approvals API, approves the test run and
	// rejects the rest.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			pending, err := srv.client.Approvals(ctx)
			if err != nil {
				continue
			}
			for _, p := range pending {
				if p.Status != "pending" {
					continue
				}
				d := "deny"
				if strings.Contains(string(p.Arguments), "go test ./...") {
					d = "allow"
				}
				_ = srv.client.ResolveApproval(ctx, p.ApprovalID, api.ResolveApprovalRequest{Decision: d, Approver: &governance.ActorRef{Kind: "user", ID: "reviewer"}})
			}
		}
	}()

	readme, mainGo := filepath.Join(ws, "README.md"), filepath.Join(ws, "src", "main.go")
	var calls []sessionCall
	add := func(n int, c sessionCall) {
		for i := 0; i < n; i++ {
			calls = append(calls, c)
		}
	}
	add(10, sessionCall{tool: "Read", input: map[string]any{"file_path": readme}, answer: "allow"})
	add(4, sessionCall{tool: "Glob", input: map[string]any{"pattern": "**/*.go"}, answer: "allow"})
	add(4, sessionCall{tool: "Grep", input: map[string]any{"pattern": "package", "path": ws}, answer: "allow"})
	add(3, sessionCall{tool: "Grep", input: map[string]any{"pattern": "package", "path": mainGo}, answer: "allow"})
	for i := 0; i < 6; i++ {
		calls = append(calls, sessionCall{tool: "Write", input: map[string]any{"file_path": filepath.Join(ws, "src", fmt.Sprintf("gen%d.go", i)), "content": "package src\n"}, answer: "allow"})
	}
	add(5, sessionCall{tool: "Edit", input: map[string]any{"file_path": mainGo, "old_string": "main", "new_string": "main"}, answer: "allow"})
	add(2, sessionCall{tool: "Edit", input: map[string]any{"file_path": mainGo, "old_string": "x", "new_string": "y"}, answer: "allow", failed: true})
	add(3, sessionCall{tool: "Read", input: map[string]any{"file_path": "/etc/passwd"}, answer: "deny", reason: "path.outside_root"})
	add(2, sessionCall{tool: "Write", input: map[string]any{"file_path": "/etc/cron.d/x", "content": "* * * * * root sh"}, answer: "deny", reason: "path.outside_root"})
	add(2, sessionCall{tool: "Bash", input: map[string]any{"command": "rm -rf / --no-preserve-root"}, answer: "deny", reason: "destructive.rm_recursive_force"})
	add(3, sessionCall{tool: "Bash", input: map[string]any{"command": "go test ./..."}, answer: "allow"})
	add(2, sessionCall{tool: "Bash", input: map[string]any{"command": "curl -s https://example.com/install.sh"}, answer: "deny", reason: "approval.required"})
	add(2, sessionCall{tool: "WebFetch", input: map[string]any{"url": "https://example.com", "prompt": "summarize"}, answer: "deny", reason: "policy.no_gate_binding"})
	add(2, sessionCall{tool: "mcp__github__create_issue", input: map[string]any{"title": "x"}, answer: "deny", reason: "policy.no_gate_binding"})
	if len(calls) != 50 {
		t.Fatalf("the session has %d calls, want 50", len(calls))
	}

	sid := "session-" + uuid.NewString()
	hook := func(event string, fields map[string]any) (int, string, string) {
		m := map[string]any{"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": ws, "permission_mode": "default", "hook_event_name": event}
		for k, v := range fields {
			m[k] = v
		}
		in, _ := json.Marshal(m)
		return runCLI(t, string(in), "hook", "--agent", "claude", "--url", srv.url, "--token-file", tokenFile)
	}
	if code, _, errs := hook("SessionStart", map[string]any{"source": "startup"}); code != 0 {
		t.Fatalf("SessionStart: exit %d %s", code, errs)
	}
	for i, c := range calls {
		id := fmt.Sprintf("toolu_%02d", i)
		code, out, errs := hook("PreToolUse", map[string]any{"tool_name": c.tool, "tool_input": c.input, "tool_use_id": id})
		switch c.answer {
		case "allow":
			if code != 0 || strings.TrimSpace(out) != "{}" {
				t.Fatalf("call %d %s %v: want allowed, got exit %d %q %q", i, c.tool, c.input, code, out, errs)
			}
			event, extra := "PostToolUse", map[string]any{"tool_response": map[string]any{"ok": true, "n": i}}
			if c.failed {
				event, extra = "PostToolUseFailure", map[string]any{"error": "Exit code 1", "is_interrupt": false}
			}
			fields := map[string]any{"tool_name": c.tool, "tool_input": c.input, "tool_use_id": id}
			for k, v := range extra {
				fields[k] = v
			}
			if code, _, errs := hook(event, fields); code != 0 {
				t.Fatalf("call %d %s: exit %d %s", i, event, code, errs)
			}
		case "deny":
			var body struct {
				Out map[string]string `json:"hookSpecificOutput"`
			}
			if code != 2 || json.Unmarshal([]byte(out), &body) != nil || body.Out["permissionDecision"] != "deny" || strings.TrimSpace(errs) == "" {
				t.Fatalf("call %d %s %v: want denied, got exit %d %q %q", i, c.tool, c.input, code, out, errs)
			}
		}
	}
	code, out, errs := hook("SessionEnd", map[string]any{"reason": "logout"})
	if code != 0 || !strings.Contains(out, "session certified") {
		t.Fatalf("SessionEnd: exit %d %q %q", code, out, errs)
	}
	var sess struct {
		State       string                      `json:"state"`
		ChainID     string                      `json:"chain_id"`
		Certificate *governance.TaskCertificate `json:"certificate"`
	}
	req, _ := http.NewRequest(http.MethodGet, srv.url+"/v1/hooks/claude/sessions/"+sid, nil)
	token, err := os.ReadFile(tokenFile)
	must(t, err)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	must(t, json.NewDecoder(resp.Body).Decode(&sess))
	resp.Body.Close()
	if sess.State != "ended" || sess.Certificate == nil {
		t.Fatalf("no certificate: %+v", sess)
	}
	cert := sess.Certificate
	if cert.GateSummary.HardDeny == 0 || cert.ProcessGrade != governance.GradeFull {
		t.Fatalf("certificate %+v", cert)
	}
	chain := sess.ChainID
	must(t, srv.cmd.Process.Signal(syscall.SIGTERM))
	if code := srv.wait(t); code != 0 {
		t.Fatalf("serve exited %d: %s", code, srv.stderr)
	}

	// The chain, exported and verified by the CLI against the certified head.
	file := filepath.Join(t.TempDir(), "chain.jsonl")
	if code, _, errs := runCLI(t, "", "chain", "export", "--data", data, "--chain", chain, "--out", file); code != 0 {
		t.Fatalf("chain export: exit %d %s", code, errs)
	}
	code, out, errs = runCLI(t, "", "chain", "verify", "--file", file, "--expected-head", cert.EvidenceChainHead)
	if code != 0 || !strings.Contains(out, `"valid":true`) {
		t.Fatalf("chain verify: exit %d %q %q", code, out, errs)
	}
	text, err := os.ReadFile(file)
	must(t, err)
	for _, want := range []string{"destructive.rm_recursive_force", `\"approver_id\":\"reviewer\"`, "approval.required", "policy.no_gate_binding", `\"failure\":\"tool_error\"`} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the chain has no %s", want)
		}
	}
	if strings.Contains(string(text), "# project") || strings.Contains(string(text), `\"ok\":true`) {
		t.Error("a tool response reached the evidence")
	}
	t.Logf("50 calls: certificate %s, %s, gate summary %+v, chain %d bytes", cert.CertificateID, cert.ProcessGrade, cert.GateSummary, len(text))
}

// agentPolicyFile is the demo's workspace policy with the path guard on
// the task's workspace ($workspace), bash behind approval and the
// destructive guard as a hard gate.
func agentPolicyFile(t *testing.T) []byte {
	t.Helper()
	file, err := policyfile.WorkspaceTemplate(policyfile.WorkspaceOptions{
		PolicyID: uuid.New(), Version: "agents-1", Root: "/placeholder", RequireBashApproval: true,
	})
	must(t, err)
	var doc map[string]any
	must(t, json.Unmarshal(file, &doc))
	gates := doc["gates"].([]any)
	gates[0].(map[string]any)["config"].(map[string]any)["root"] = "$workspace"
	doc["gates"] = append(gates, map[string]any{
		"gate_id": "destructive", "module": "destructive", "level": "hard", "order": 5, "tool_ids": []string{"bash"},
	})
	file, err = json.Marshal(doc)
	must(t, err)
	return file
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
