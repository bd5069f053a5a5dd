package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hookclient"
)

// BenchmarkCommandHook is the command hook as an agent runs it: start a
// process, read the hook input, one loopback round trip to a warm sidecar
// (the real server, service, gates and Pebble store), print the answer.
// Goal: ≤ 10 ms a call. Measured for the full govhost binary and for
// govhost-hook; references in the same run: starting /bin/true (the
// process floor) and the same round trip in-process (no process start).
//
//	go test -run '^$' -bench CommandHook -benchtime 200x ./server/
func BenchmarkCommandHook(b *testing.B) {
	e := openEnv(b, false)
	defer e.close()
	tokenFile := filepath.Join(b.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(testToken), 0o600); err != nil {
		b.Fatal(err)
	}
	bin := b.TempDir()
	for _, pkg := range []string{"govhost", "govhost-hook"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, pkg), "github.com/govhost/govhost/cmd/"+pkg).CombinedOutput()
		if err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	sid, ws := "bench-"+uuid.NewString(), b.TempDir()
	readme := filepath.Join(ws, "README.md")
	if err := os.WriteFile(readme, []byte("# bench\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	n := 0
	input := func() []byte {
		n++
		in, _ := json.Marshal(map[string]any{"session_id": sid, "cwd": ws, "permission_mode": "default", "hook_event_name": "PreToolUse",
			"tool_name": "Read", "tool_use_id": fmt.Sprintf("toolu_%d", n), "tool_input": map[string]any{"file_path": readme}})
		return in
	}
	process := func(b *testing.B, argv ...string) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin = bytes.NewReader(input())
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				b.Fatalf("%v: %v: %s", argv, err, errb.String())
			}
			if argv[0] != "/bin/true" && out.String() != "{}\n" {
				b.Fatalf("unexpected answer %q", out.String())
			}
		}
	}
	b.Run("binary=govhost", func(b *testing.B) {
		process(b, filepath.Join(bin, "govhost"), "hook", "--agent", "claude", "--url", e.http.URL, "--token-file", tokenFile)
	})
	b.Run("binary=govhost-hook", func(b *testing.B) {
		process(b, filepath.Join(bin, "govhost-hook"), "--agent", "claude", "--url", e.http.URL, "--token-file", tokenFile)
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
			code := hookclient.Run(context.Background(), hookclient.Options{Agent: agents.Claude, URL: e.http.URL, Token: testToken}, bytes.NewReader(input()), io.Discard, io.Discard)
			if code != 0 {
				b.Fatalf("exit %d", code)
			}
		}
	})
}
