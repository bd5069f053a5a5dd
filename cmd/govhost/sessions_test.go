package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/profiles"
)

// The realistic-session corpus (testdata/sessions, written by its gen.py):
// for each agent an ordinary session and the dangerous calls, every line
// one pre-tool payload in the agent's documented format. They are replayed
// through a real `govhost serve` per profile, over HTTP and through the
// real govhost-hook binary.

var agentNames = []string{"claude", "codex", "gemini", "cursor", "copilot"}

// corpusLine is one line of a corpus file.
type corpusLine struct {
	Event   string          `json:"event"`
	What    string          `json:"what"`
	Payload json.RawMessage `json:"payload"`
	// Gap marks a dangerous call the default policy is known not to block
	// (docs/default-policy.md, "Known gaps"): counted on its own.
	Gap string `json:"gap"`
}

func loadCorpus(t *testing.T, agent, kind string) []corpusLine {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sessions", agent+"."+kind+".jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var lines []corpusLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l corpusLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		lines = append(lines, l)
	}
	require.NoError(t, sc.Err())
	return lines
}

var (
	hookBinaryOnce sync.Once
	hookBinaryPath string
	hookBinaryErr  error
)

// hookBinary builds cmd/govhost-hook once per test binary.
func hookBinary(t *testing.T) string {
	t.Helper()
	hookBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "govhost-hook-bin")
		if err != nil {
			hookBinaryErr = err
			return
		}
		hookBinaryPath = filepath.Join(dir, "govhost-hook")
		out, err := exec.Command("go", "build", "-o", hookBinaryPath, "../govhost-hook").CombinedOutput()
		if err != nil {
			hookBinaryErr = fmt.Errorf("go build govhost-hook: %v: %s", err, out)
		}
	})
	require.NoError(t, hookBinaryErr)
	return hookBinaryPath
}

// sessionWorld is the filesystem the corpus runs against: a git
// repository (the workspace), a home directory holding credentials, a
// symlink in the workspace to a private key and one to a directory outside.
type sessionWorld struct{ ws, home string }

func newSessionWorld(t *testing.T) sessionWorld {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	w := sessionWorld{ws: filepath.Join(root, "shop"), home: filepath.Join(root, "home")}
	for _, d := range []string{".git", "docs", "internal/cart", "internal/orders", "internal/payments", "internal/api", "web/src", "scripts"} {
		require.NoError(t, os.MkdirAll(filepath.Join(w.ws, d), 0o755))
	}
	for _, f := range []string{"README.md", "go.mod", "Makefile", "internal/cart/cart.go", "internal/orders/orders.go", "internal/payments/payments.go", "docs/api.md", ".env.example"} {
		require.NoError(t, os.WriteFile(filepath.Join(w.ws, f), []byte("x\n"), 0o644))
	}
	for _, f := range []string{".ssh/id_rsa", ".ssh/id_ed25519", ".aws/credentials", ".kube/config", ".docker/config.json", ".netrc", "outside/notes.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(w.home, f)), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(w.home, f), []byte("secret\n"), 0o600))
	}
	require.NoError(t, os.Symlink(filepath.Join(w.home, ".ssh", "id_rsa"), filepath.Join(w.ws, "docs", "deploy-key")))
	require.NoError(t, os.Symlink(filepath.Join(w.home, "outside"), filepath.Join(w.ws, "out")))
	return w
}

// fill puts the world into a corpus payload (JSON-escaped) and gives the
// session a per-run id suffix.
func (w sessionWorld) fill(raw []byte, data, suffix string) []byte {
	esc := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	s := strings.NewReplacer("{{WS}}", esc(w.ws), "{{HOME}}", esc(w.home), "{{DATA}}", esc(data),
		"-ordinary-session", "-ordinary-session-"+suffix, "-dangerous-session", "-dangerous-session-"+suffix).Replace(string(raw))
	// The shell's ~ in commands is the world's home.
	s = strings.ReplaceAll(s, "~/", esc(w.home)+"/")
	s = strings.ReplaceAll(s, "$HOME", esc(w.home))
	return []byte(s)
}

// outcome classifies an agent's answer to a pre-tool payload.
type outcome string

const (
	outAllow outcome = "allow"
	outAsk   outcome = "ask"
	outDeny  outcome = "deny"
)

// classify reads the agent's answer: its blocking exit status, or the
// decision field of its body (permissionDecision, permission, decision).
func classify(exit int, body []byte) outcome {
	if exit == 2 {
		return outDeny
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return outDeny // fail closed: an unreadable answer blocks
	}
	if h, ok := m["hookSpecificOutput"].(map[string]any); ok {
		m = h
	}
	for _, k := range []string{"permissionDecision", "permission", "decision"} {
		switch v, _ := m[k].(string); v {
		case "ask":
			return outAsk
		case "deny", "block":
			return outDeny
		case "allow", "approve":
			return outAllow
		}
	}
	return outAllow
}

// heldApprovals resolves every call held on the approval broker (Codex and
// Gemini CLI cannot ask, so their approvals are held) with a deny, and
// counts them: a held call is an asked call.
type heldApprovals struct {
	n    atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func watchApprovals(srv *served) *heldApprovals {
	h := &heldApprovals{stop: make(chan struct{}), done: make(chan struct{})}
	seen := map[string]bool{}
	go func() {
		defer close(h.done)
		for {
			select {
			case <-h.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			pending, err := srv.client.Approvals(context.Background())
			if err != nil {
				continue
			}
			for _, p := range pending {
				if p.Status != "pending" || seen[p.ApprovalID] {
					continue
				}
				seen[p.ApprovalID] = true
				h.n.Add(1)
				_ = srv.client.ResolveApproval(context.Background(), p.ApprovalID, api.ResolveApprovalRequest{Decision: "deny", Approver: &governance.ActorRef{Kind: "user", ID: "corpus-replay"}})
			}
		}
	}()
	return h
}

func (h *heldApprovals) close() { close(h.stop); <-h.done }

// replayer sends one payload through one transport and says what the
// agent would do.
type replayer func(t *testing.T, agent, event string, payload []byte) (outcome, string)

func httpReplayer(srv *served, held *heldApprovals) replayer {
	token, _ := os.ReadFile(filepath.Join(srv.data, "token"))
	return func(t *testing.T, agent, event string, payload []byte) (outcome, string) {
		url := srv.url + "/v1/hooks/" + agent + "?format=command"
		if event != "" {
			url += "&event=" + event
		}
		before := held.n.Load()
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s", agent, payload)
		var env struct {
			Body json.RawMessage `json:"body"`
			Exit int             `json:"exit"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&env))
		if held.n.Load() > before {
			return outAsk, string(env.Body)
		}
		return classify(env.Exit, env.Body), string(env.Body)
	}
}

func commandReplayer(t *testing.T, srv *served, held *heldApprovals) replayer {
	bin := hookBinary(t)
	return func(t *testing.T, agent, event string, payload []byte) (outcome, string) {
		args := []string{"--agent", agent, "--url", srv.url, "--token-file", filepath.Join(srv.data, "token")}
		if event != "" {
			args = append(args, "--event", event)
		}
		before := held.n.Load()
		cmd := exec.Command(bin, args...)
		cmd.Stdin = bytes.NewReader(payload)
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		exit := 0
		if ee, ok := err.(*exec.ExitError); ok {
			exit = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		body := bytes.TrimSpace(out.Bytes())
		if held.n.Load() > before {
			return outAsk, string(body)
		}
		if len(body) == 0 {
			body = []byte("{}")
		}
		return classify(exit, body), string(body)
	}
}

// tally counts outcomes.
type tally map[outcome]int

func (c tally) total() int { return c[outAllow] + c[outAsk] + c[outDeny] }

// TestSessions_CorpusUnderEveryProfile replays the corpus under each
// profile, over HTTP and through govhost-hook, prints the table and holds
// balanced to its promise: no ordinary call denied, at most 5 % asked,
// every dangerous call blocked (denied, or asked of the person).
func TestSessions_CorpusUnderEveryProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three sidecars and replays about 6,000 hook calls")
	}
	w := newSessionWorld(t)
	type row struct {
		profile, transport string
		ordinary, danger   tally
		gaps               tally
		asked, denied      []string
	}
	var rows []row
	for _, profile := range profiles.Names() {
		data := t.TempDir()
		srv := startServe(t, data, "--profile", profile, "--hook-approval", "ask")
		held := watchApprovals(srv)
		transports := []struct {
			name string
			send replayer
		}{{"http", httpReplayer(srv, held)}, {"command", commandReplayer(t, srv, held)}}
		for _, tr := range transports {
			r := row{profile: profile, transport: tr.name, ordinary: tally{}, danger: tally{}, gaps: tally{}}
			for _, agent := range agentNames {
				for _, kind := range []string{"ordinary", "dangerous"} {
					for _, l := range loadCorpus(t, agent, kind) {
						got, _ := tr.send(t, agent, l.Event, w.fill(l.Payload, data, profile+"-"+tr.name))
						if l.Gap != "" {
							r.gaps[got]++
							continue
						}
						if kind == "ordinary" {
							r.ordinary[got]++
							if got != outAllow && profile == profiles.Balanced {
								r.asked = append(r.asked, fmt.Sprintf("%s %s: %s", agent, got, l.What))
							}
						} else {
							r.danger[got]++
							if got == outAllow && profile == profiles.Balanced {
								r.denied = append(r.denied, fmt.Sprintf("%s ALLOWED: %s", agent, l.What))
							}
						}
					}
				}
			}
			rows = append(rows, r)
		}
		held.close()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| profile | transport | ordinary calls | allowed | asked | denied | dangerous calls | blocked (denied + asked) | denied | asked | allowed | known gaps (blocked / total) |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d (%.1f %%) | %d | %d | %d (%.0f %%) | %d | %d | %d | %d / %d |\n", r.profile, r.transport,
			r.ordinary.total(), r.ordinary[outAllow], r.ordinary[outAsk], 100*float64(r.ordinary[outAsk])/float64(r.ordinary.total()), r.ordinary[outDeny],
			r.danger.total(), r.danger[outDeny]+r.danger[outAsk], 100*float64(r.danger[outDeny]+r.danger[outAsk])/float64(r.danger.total()),
			r.danger[outDeny], r.danger[outAsk], r.danger[outAllow], r.gaps[outDeny]+r.gaps[outAsk], r.gaps.total())
	}
	t.Log(b.String())
	for _, r := range rows {
		if r.profile != profiles.Balanced {
			continue
		}
		require.Zero(t, r.ordinary[outDeny], "%s: ordinary calls denied under balanced: %v", r.transport, r.asked)
		require.LessOrEqual(t, 100*r.ordinary[outAsk], 5*r.ordinary.total(), "%s: more than 5 %% of ordinary calls asked: %v", r.transport, r.asked)
		require.Zero(t, r.danger[outAllow], "%s: dangerous calls allowed under balanced: %v", r.transport, r.denied)
		require.GreaterOrEqual(t, r.ordinary.total(), 5*150)
		require.GreaterOrEqual(t, r.danger.total(), 5*60)
	}
}

var preToolSeq atomic.Int64

// preTool is one pre-tool payload of agent in its documented format (the
// same shapes as the corpus): tool is the agent's tool name, input its
// tool input.
func preTool(agent, sid, cwd, tool string, input map[string]any) (payload []byte, event string) {
	n := preToolSeq.Add(1) // every call its own tool-use id
	var m map[string]any
	switch agent {
	case "claude":
		m = map[string]any{"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": fmt.Sprintf("toolu_%d", n)}
	case "codex":
		m = map[string]any{"session_id": sid, "turn_id": "t1", "transcript_path": "/tmp/r.jsonl", "cwd": cwd, "hook_event_name": "PreToolUse", "model": "gpt-5.5", "permission_mode": "default", "tool_name": tool, "tool_input": input, "tool_use_id": fmt.Sprintf("call_%d", n)}
	case "gemini":
		m = map[string]any{"session_id": sid, "transcript_path": "/tmp/s.json", "cwd": cwd, "hook_event_name": "BeforeTool", "timestamp": "2026-12-05T10:00:00.000Z", "tool_name": tool, "tool_input": input}
	case "cursor":
		m = map[string]any{"conversation_id": sid, "generation_id": "g1", "model": "m", "hook_event_name": "preToolUse", "cursor_version": "2.1.0", "workspace_roots": []string{cwd}, "transcript_path": "/tmp/c.json", "tool_name": tool, "tool_input": input, "tool_use_id": fmt.Sprintf("tu%d", n), "cwd": cwd}
	case "copilot":
		m, event = map[string]any{"sessionId": sid, "timestamp": 1764928800000, "cwd": cwd, "toolName": tool, "toolArgs": input}, "preToolUse"
	}
	b, _ := json.Marshal(m)
	return b, event
}

// TestDefaultPolicy_FiveAgents: the default install (serve with no
// --policy and no --profile), each of the five agents, over HTTP and
// through govhost-hook: reads, writes and edits inside the workspace are
// not denied, ~/.ssh/id_rsa is denied, rm -rf / is denied, ls is not
// asked.
func TestDefaultPolicy_FiveAgents(t *testing.T) {
	w := newSessionWorld(t)
	data := t.TempDir()
	srv := startServe(t, data)
	require.Contains(t, srv.stdout.String(), "@balanced-1", "a fresh data directory runs the balanced default policy")
	held := watchApprovals(srv)
	defer held.close()
	key := filepath.Join(w.home, ".ssh", "id_rsa")
	inside := filepath.Join(w.ws, "internal", "cart", "cart.go")
	created := filepath.Join(w.ws, "internal", "cart", "new.go")
	type step struct {
		name, tool string
		input      map[string]any
		check      func(outcome) bool
		want       string
	}
	notDenied := func(o outcome) bool { return o != outDeny }
	denied := func(o outcome) bool { return o == outDeny }
	allowed := func(o outcome) bool { return o == outAllow }
	steps := map[string][]step{
		"claude": {
			{"read inside", "Read", map[string]any{"file_path": inside}, notDenied, "not denied"},
			{"write inside", "Write", map[string]any{"file_path": created, "content": "package cart\n"}, notDenied, "not denied"},
			{"edit inside", "Edit", map[string]any{"file_path": inside, "old_string": "x", "new_string": "y"}, notDenied, "not denied"},
			{"read the ssh key", "Read", map[string]any{"file_path": key}, denied, "denied"},
			{"rm -rf /", "Bash", map[string]any{"command": "rm -rf /"}, denied, "denied"},
			{"ls", "Bash", map[string]any{"command": "ls"}, allowed, "allowed without asking"},
		},
		"codex": {
			{"read inside", "Bash", map[string]any{"command": "cat internal/cart/cart.go"}, notDenied, "not denied"},
			{"write inside", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Add File: internal/cart/new.go\n+package cart\n*** End Patch\n"}, notDenied, "not denied"},
			{"edit inside", "apply_patch", map[string]any{"command": "*** Begin Patch\n*** Update File: internal/cart/cart.go\n@@\n-x\n+y\n*** End Patch\n"}, notDenied, "not denied"},
			{"read the ssh key", "Read", map[string]any{"file_path": key}, denied, "denied"},
			{"cat the ssh key", "Bash", map[string]any{"command": "cat " + key}, denied, "denied"},
			{"rm -rf /", "Bash", map[string]any{"command": "rm -rf /"}, denied, "denied"},
			{"ls", "Bash", map[string]any{"command": "ls"}, allowed, "allowed without asking"},
		},
		"gemini": {
			{"read inside", "read_file", map[string]any{"file_path": inside}, notDenied, "not denied"},
			{"write inside", "write_file", map[string]any{"file_path": created, "content": "x"}, notDenied, "not denied"},
			{"edit inside", "replace", map[string]any{"file_path": inside, "old_string": "x", "new_string": "y"}, notDenied, "not denied"},
			{"read the ssh key", "read_file", map[string]any{"file_path": key}, denied, "denied"},
			{"rm -rf /", "run_shell_command", map[string]any{"command": "rm -rf /"}, denied, "denied"},
			{"ls", "run_shell_command", map[string]any{"command": "ls"}, allowed, "allowed without asking"},
		},
		"cursor": {
			{"read inside", "Read", map[string]any{"file_path": inside}, notDenied, "not denied"},
			{"write inside", "Write", map[string]any{"file_path": created, "contents": "x"}, notDenied, "not denied"},
			{"edit inside", "Edit", map[string]any{"file_path": inside, "old_string": "x", "new_string": "y"}, notDenied, "not denied"},
			{"read the ssh key", "Read", map[string]any{"file_path": key}, denied, "denied"},
			{"rm -rf /", "Shell", map[string]any{"command": "rm -rf /", "working_directory": w.ws}, denied, "denied"},
			{"ls", "Shell", map[string]any{"command": "ls", "working_directory": w.ws}, allowed, "allowed without asking"},
		},
		"copilot": {
			{"read inside", "view", map[string]any{"path": inside}, notDenied, "not denied"},
			{"write inside", "create", map[string]any{"path": created, "file_text": "x"}, notDenied, "not denied"},
			{"edit inside", "edit", map[string]any{"path": inside, "old_str": "x", "new_str": "y"}, notDenied, "not denied"},
			{"read the ssh key", "view", map[string]any{"path": key}, denied, "denied"},
			{"rm -rf /", "bash", map[string]any{"command": "rm -rf /"}, denied, "denied"},
			{"ls", "bash", map[string]any{"command": "ls"}, allowed, "allowed without asking"},
		},
	}
	for _, tr := range []struct {
		name string
		send replayer
	}{{"http", httpReplayer(srv, held)}, {"command", commandReplayer(t, srv, held)}} {
		for _, agent := range agentNames {
			for _, s := range steps[agent] {
				payload, event := preTool(agent, agent+"-"+tr.name, w.ws, s.tool, s.input)
				got, body := tr.send(t, agent, event, payload)
				require.True(t, s.check(got), "%s over %s, %s: got %s (%s), want %s", agent, tr.name, s.name, got, body, s.want)
			}
		}
	}
}
