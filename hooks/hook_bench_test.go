package hooks_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hookclient"
	"github.com/govhost/govhost/hooks"
)

// BenchmarkCommandHook is the command hook as an agent runs it: start a
// process, read the hook input, one loopback round trip to a warm sidecar
// (the real Service, gates and Pebble store), print the answer. Goal: ≤ 10
// ms a call. Measured for the full govhost binary and for govhost-hook;
// references in the same run: starting /bin/true (the process floor) and
// the same round trip in-process (no process start).
//
//	go test -run '^$' -bench CommandHook -benchtime 200x ./hooks/
func BenchmarkCommandHook(b *testing.B) {
	r := newRig(b, hooks.ApprovalAsk)
	srv := httptest.NewServer(hooks.Handler(r.svc))
	defer srv.Close()
	bin := b.TempDir()
	for _, pkg := range []string{"govhost", "govhost-hook"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, pkg), "github.com/govhost/govhost/cmd/"+pkg).CombinedOutput()
		if err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	sid := "bench-" + uuid.NewString()
	readme := filepath.Join(r.ws, "README.md")
	n := 0
	input := func() []byte {
		n++
		return claudeEvent(sid, r.ws, "PreToolUse", pre("Read", fmt.Sprintf("toolu_%d", n), map[string]any{"file_path": readme}))
	}
	process := func(b *testing.B, argv ...string) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin = bytes.NewReader(input())
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Run(); err != nil {
				b.Fatalf("%v: %v", argv, err)
			}
			if argv[0] != "/bin/true" && out.String() != "{}\n" {
				b.Fatalf("unexpected answer %q", out.String())
			}
		}
	}
	b.Run("binary=govhost", func(b *testing.B) {
		process(b, filepath.Join(bin, "govhost"), "hook", "--agent", "claude", "--url", srv.URL)
	})
	b.Run("binary=govhost-hook", func(b *testing.B) {
		process(b, filepath.Join(bin, "govhost-hook"), "--agent", "claude", "--url", srv.URL)
	})
	b.Run("reference=process_start_bin_true", func(b *testing.B) {
		if _, err := os.Stat("/bin/true"); err != nil {
			b.Skip("no /bin/true")
		}
		process(b, "/bin/true")
	})
	b.Run("reference=in_process_round_trip", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			code := hookclient.Run(context.Background(), hookclient.Options{Agent: agents.Claude, URL: srv.URL}, bytes.NewReader(input()), io.Discard, io.Discard)
			if code != 0 {
				b.Fatalf("exit %d", code)
			}
		}
	})
}
