package agents_test

import (
	"testing"

	"github.com/govhost/govhost/agents"
)

// BenchmarkTranslate is the hook hot path without the gates: decode a
// PreToolUse payload, map it to a governed call, render the deny answer.
// Reference: decoding the same payload into a generic map.
func BenchmarkTranslate(b *testing.B) {
	d, err := agents.Lookup(agents.Claude)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"session_id":"abc123","transcript_path":"/home/user/.claude/projects/p/t.jsonl","cwd":"/home/user/my-project","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/home/user/my-project/src/main.go","content":"package main\n\nfunc main() {}\n"},"tool_use_id":"toolu_01ABC123"}`)
	fx := facts{"/home/user/my-project/src/main.go": "file"}
	b.Run("path=decode+request+answer", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ev, err := d.Decode("", body)
			if err != nil {
				b.Fatal(err)
			}
			calls, err := d.Request(ev, fx)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := d.CorrelationKey(ev, calls); err != nil {
				b.Fatal(err)
			}
			_ = d.Answer(ev, agents.Verdict{Decision: agents.Deny, Message: "permission denied"}, agents.AnswerOptions{})
		}
	})
	b.Run("path=reference_generic_decode", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var m map[string]any
			if err := jsonUnmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
