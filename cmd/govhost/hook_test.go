package main

import (
	"net"
	"strings"
	"testing"
)

func TestHook_SidecarDownBlocks(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	code, out, errs := runCLI(t, `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t"}`,
		"hook", "--agent", "claude", "--url", url)
	if code != 2 || !strings.Contains(errs, "gate unavailable") || !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestHook_AgentIsRequired(t *testing.T) {
	code, _, errs := runCLI(t, "{}", "hook")
	if code != exitUsage || !strings.Contains(errs, "agent") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
