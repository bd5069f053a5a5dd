package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// runCLI runs govhost in-process with the given stdin and returns its exit
// status, stdout and stderr.
// testCacheDir is one compilation cache for every test of the package
// (through GOVHOST_WASM_CACHE or --cache-dir): the built-in modules are
// compiled once, not once per test.
var testCacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "govhost-wasm-cache-")
	if err != nil {
		panic(err)
	}
	testCacheDir = dir
	os.Setenv(cacheEnv, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

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
