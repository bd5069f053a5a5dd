package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// runCLI runs govhost in-process with the given stdin and returns its exit
// status, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	var in io.Reader = strings.NewReader(stdin)
	code := run(args, in, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRun_UnknownCommand(t *testing.T) {
	code, _, stderr := runCLI(t, "", "frobnicate")
	if code != exitUsage || !strings.Contains(stderr, "unknown command") {
		t.Fatalf("code %d stderr %q", code, stderr)
	}
}
