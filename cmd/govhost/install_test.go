package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstall_ThenDoctor(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	data := t.TempDir()
	code, out, errs := runCLI(t, "", "install", "--agent", "gemini", "--hook-binary", "/opt/bin/govhost-hook", "--data", data, "--url", "http://127.0.0.1:1")
	if code != 0 || !strings.Contains(out, "installed in "+filepath.Join(home, ".gemini", "settings.json")) {
		t.Fatalf("install: exit %d, %q, %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "", "install", "--agent", "gemini", "--hook-binary", "/opt/bin/govhost-hook", "--data", data, "--url", "http://127.0.0.1:1")
	if code != 0 || !strings.Contains(out, "unchanged") {
		t.Fatalf("second install: exit %d, %q", code, out)
	}
	if err := os.WriteFile(filepath.Join(data, "token"), []byte(strings.Repeat("t", 64)), 0o600); err != nil {
		t.Fatal(err)
	}
	// The sidecar is down: doctor says so and exits 1; the hook file is fine.
	code, out, _ = runCLI(t, "", "doctor", "--data", data, "--url", "http://127.0.0.1:1", "--project", t.TempDir())
	if code != exitInvalid || !strings.Contains(out, "FAIL  sidecar") || !strings.Contains(out, "ok    gemini (user)") {
		t.Fatalf("doctor: exit %d, %q", code, out)
	}
	code, _, errs = runCLI(t, "", "install", "--agent", "codex", "--hook", "http", "--data", data)
	if code != exitUsage || !strings.Contains(errs, "only Claude Code") {
		t.Fatalf("codex http: exit %d, %q", code, errs)
	}
}
