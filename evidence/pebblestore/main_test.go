package pebblestore

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// childEnv makes the test binary act as a child process (crash and lock
// tests): TestMain runs the named child instead of the tests.
const childEnv = "GOVHOST_PEBBLESTORE_CHILD"

var children = map[string]func() error{}

func TestMain(m *testing.M) {
	if name := os.Getenv(childEnv); name != "" {
		run := children[name]
		if run == nil {
			fmt.Fprintf(os.Stderr, "unknown child %q\n", name)
			os.Exit(3)
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childCommand re-executes the test binary as child name.
func childCommand(name string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+name), env...)
	return cmd
}
