package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/internal/pgtest"
)

// runCLI runs govhost in-process with the given stdin and returns its exit
// status, stdout and stderr.
// testCacheDir is one compilation cache for every test of the package
// (through GOVHOST_WASM_CACHE or --cache-dir): the built-in modules are
// compiled once, not once per test.
var testCacheDir string

// asGovhostEnv makes the test binary run as govhost with its own
// arguments: a real `govhost` executable for settings files that name one.
const asGovhostEnv = "GOVHOST_TEST_AS_GOVHOST"

func TestMain(m *testing.M) {
	if os.Getenv(asGovhostEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if encoded := os.Getenv(childArgsEnv); encoded != "" {
		// This test binary is a govhost child process (see startServe).
		var args []string
		if err := json.Unmarshal([]byte(encoded), &args); err != nil {
			panic(err)
		}
		os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
	}
	dir, err := os.MkdirTemp("", "govhost-wasm-cache-")
	if err != nil {
		panic(err)
	}
	testCacheDir = dir
	os.Setenv(cacheEnv, dir)
	code := pgtest.Main(m)
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

// everyCommand walks the command tree as a user sees it in --help.
func everyCommand(c *cobra.Command, visit func(path []string, c *cobra.Command)) {
	var walk func(path []string, c *cobra.Command)
	walk = func(path []string, c *cobra.Command) {
		visit(path, c)
		for _, sub := range c.Commands() {
			walk(append(append([]string(nil), path...), sub.Name()), sub)
		}
	}
	walk(nil, c)
}

func TestCLI_EveryCommandHasHelp(t *testing.T) {
	n := 0
	everyCommand(newRootCmd(), func(path []string, c *cobra.Command) {
		n++
		for _, flag := range []string{"--help", "-h"} {
			code, stdout, stderr := runCLI(t, "", append(path, flag)...)
			require.Equal(t, exitOK, code, "%v %s: %s", path, flag, stderr)
			require.Contains(t, stdout, "Usage:", "%v", path)
			if c.Long == "" {
				require.Contains(t, stdout, c.Short, "%v", path)
			} else {
				require.Contains(t, stdout, c.Long[:40], "%v", path)
			}
		}
	})
	require.GreaterOrEqual(t, n, 14, "root, canon, chain (2), demo, eval, plugin (1), policy (5 + template workspace)")
}

func TestCLI_GroupsAndUnknownCommands(t *testing.T) {
	for _, args := range [][]string{{}, {"policy"}, {"chain"}, {"plugin"}, {"policy", "template"}} {
		code, stdout, stderr := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "Available Commands:", "%v: the group's help goes to stderr", args)
	}
	for _, args := range [][]string{{"policy", "frob"}, {"chain", "frob"}, {"frobnicate"}} {
		code, _, stderr := runCLI(t, "", args...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.Contains(t, stderr, `unknown command "frob`)
	}
	code, _, stderr := runCLI(t, "", "policy", "show", "--no-such-flag")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "unknown flag: --no-such-flag")
	code, _, stderr = runCLI(t, "", "plugin", "check")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "FILE.wasm")
}

func TestCLI_ShellCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, stdout, stderr := runCLI(t, "", "completion", shell)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, stdout, "govhost", shell)
	}
}

func TestCLI_DataFlagEverywhere(t *testing.T) {
	everyCommand(newRootCmd(), func(path []string, c *cobra.Command) {
		if c.Flags().Lookup("data") != nil {
			require.Equal(t, defaultDataDir, c.Flags().Lookup("data").DefValue, "%v", path)
		}
	})
	for _, path := range [][]string{{"demo"}, {"chain", "export"}, {"policy", "put"}, {"policy", "show"}, {"policy", "resolve"}} {
		c, _, err := newRootCmd().Find(path)
		require.NoError(t, err)
		require.NotNil(t, c.Flags().Lookup("data"), "%v has --data", path)
	}
}
