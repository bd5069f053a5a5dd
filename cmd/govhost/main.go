// Command govhost is the command-line front end of govhost: canonical hashing,
// chain verification and export, policy management, gate evaluation and the
// server. The commands are listed in one place (commands.go); each lives in
// its own file, parses its flags, calls one library or client operation and
// prints. The work is done by the packages the commands call.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Exit statuses shared by every command.
const (
	exitOK      = 0
	exitInvalid = 1 // the input was understood and found invalid (a broken chain, a denied request)
	exitUsage   = 2 // bad flags, unreadable or malformed input
)

// exitError carries a command's exit status. A nil err exits silently (the
// command already printed its verdict).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError exits 2: bad flags, unreadable or malformed input.
func usageError(err error) error { return &exitError{code: exitUsage, err: err} }

// usageErrorf is usageError of a formatted message.
func usageErrorf(format string, args ...any) error { return usageError(fmt.Errorf(format, args...)) }

// invalidError exits 1: the input was understood and refused. A plain error
// returned by a command's RunE is treated the same way.
func invalidError(err error) error { return &exitError{code: exitInvalid, err: err} }

// silentExit exits with code, printing nothing more.
func silentExit(code int) error { return &exitError{code: code} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd.CommandPath(), ee.err)
		}
		return ee.code
	}
	// Cobra's own refusals: an unknown command, bad flags or arguments.
	fmt.Fprintf(stderr, "%s: %v\nRun '%s --help' for usage.\n", cmd.CommandPath(), err, cmd.CommandPath())
	return exitUsage
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "govhost",
		Short: "Decide whether an AI agent's tool call may run, and keep proof of every decision",
		Long: `govhost runs checks ("gates", WebAssembly modules) on every tool call an agent
makes and records each decision in a SHA-256 hash chain. Exit status: 0 success,
1 the input was understood and refused (a broken chain, a denied request), 2 bad
flags or unreadable input.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE:          groupRunE,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	storeFlag(root)
	root.AddCommand(commands()...)
	classifyErrors(root)
	return root
}

// groupRunE is the RunE of a command that only holds subcommands: without
// one it prints its help to stderr and exits 2.
func groupRunE(cmd *cobra.Command, _ []string) error {
	cmd.SetOut(cmd.ErrOrStderr())
	_ = cmd.Help()
	return silentExit(exitUsage)
}

// newGroupCmd returns a command that only holds subcommands; an unknown
// subcommand is a usage error.
func newGroupCmd(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: groupRunE}
	c.AddCommand(subs...)
	return c
}

// classifyErrors makes a plain error returned by any command's RunE exit 1;
// errors cobra raises before RunE (flags, arguments) stay usage errors.
func classifyErrors(c *cobra.Command) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			var ee *exitError
			if err != nil && !errors.As(err, &ee) {
				return invalidError(err)
			}
			return err
		}
	}
	if c.Args == nil {
		c.Args = cobra.NoArgs
	}
	for _, sub := range c.Commands() {
		classifyErrors(sub)
	}
}

// exactArgs is cobra.ExactArgs with the names of the expected arguments in
// its message.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return fmt.Errorf("want %d argument(s) (%s), got %d", len(names), strings.Join(names, " "), len(args))
		}
		return nil
	}
}
