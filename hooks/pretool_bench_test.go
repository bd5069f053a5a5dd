package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hooks"
)

// BenchmarkService_PreToolUse is a hook's hot path without HTTP: one
// pre-tool event (a read inside the workspace, allowed) and its post-tool
// event through the hook service, on the real engine (Pebble, the built-in
// gates): decode, translate, authorize, complete. Claude Code names the
// call by its tool_use_id; Gemini CLI sends none, so its events pair by
// the digest of the governed arguments.
//
//	go test -run '^$' -bench Service_PreToolUse -benchtime 300x ./hooks/
func BenchmarkService_PreToolUse(b *testing.B) {
	r := newRig(b, hooks.ApprovalAsk)
	readme := filepath.Join(r.ws, "README.md")
	for _, tc := range []struct {
		agent     agents.Agent
		pre, post func(session string, i int) []byte
	}{
		{agents.Claude,
			func(s string, i int) []byte {
				return claudeEvent(s, r.ws, "PreToolUse", pre("Read", fmt.Sprint("toolu_", i), map[string]any{"file_path": readme}))
			},
			func(s string, i int) []byte {
				return claudeEvent(s, r.ws, "PostToolUse", post("Read", fmt.Sprint("toolu_", i), map[string]any{"file_path": readme}, "# demo"))
			}},
		{agents.Gemini,
			func(s string, _ int) []byte { return geminiEvent(s, r.ws, "BeforeTool", readme, nil) },
			func(s string, _ int) []byte {
				return geminiEvent(s, r.ws, "AfterTool", readme, map[string]any{"llmContent": "# demo"})
			}},
	} {
		b.Run("agent="+string(tc.agent), func(b *testing.B) {
			ctx, session := context.Background(), "bench-"+uuid.NewString()
			ins := make([][2][]byte, b.N)
			for i := range ins {
				ins[i] = [2][]byte{tc.pre(session, i), tc.post(session, i)}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := r.svc.Handle(ctx, tc.agent, "", ins[i][0])
				if res.Refused() || res.Verdict == nil || res.Verdict.Decision != agents.Allow {
					b.Fatalf("pre-tool: %s %v %+v", res.Code, res.Err, res.Verdict)
				}
				if res = r.svc.Handle(ctx, tc.agent, "", ins[i][1]); res.Refused() {
					b.Fatalf("post-tool: %s %v", res.Code, res.Err)
				}
			}
		})
	}
}

// geminiEvent is a Gemini CLI read_file event of the documented shape.
func geminiEvent(session, cwd, event, file string, response any) []byte {
	m := map[string]any{"session_id": session, "transcript_path": "/tmp/s.json", "cwd": cwd, "hook_event_name": event,
		"timestamp": "2026-12-06T01:00:00.000Z", "tool_name": "read_file", "tool_input": map[string]any{"file_path": file}}
	if response != nil {
		m["tool_response"] = response
	}
	b, _ := json.Marshal(m)
	return b
}
