// Command govhost is the command-line front end of govhost: canonical hashing,
// chain verification, policy management, gate evaluation and the server.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// Exit statuses shared by every subcommand.
const (
	exitOK      = 0
	exitInvalid = 1 // the input was understood and found invalid (a broken chain, a denied request)
	exitUsage   = 2 // bad flags, unreadable or malformed input
)

// command is one subcommand. run gets the arguments after the subcommand's
// name and returns the process exit status.
type command struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands lists every subcommand; each lives in its own file.
var commands = map[string]command{
	"canon":  {"print the canonical JSON (sha256-v1) of JSON read on stdin, and its sha256", runCanon},
	"chain":  {"chain verify --file records.jsonl --expected-head H", runChain},
	"plugin": {"plugin check FILE.wasm: load a gate module, report its ABI, exports and digest, run smoke inputs", runPlugin},
	"demo":   {"demo [--data DIR]: run a governed agent session on the embedded default, verify it, mint its certificate", runDemo},
	"eval":   {"eval --gate NAME|FILE.wasm [--config JSON] | --policy FILE: decide JSON Lines requests on stdin", runEval},
	"test":   {"test CASES... --gate NAME|FILE.wasm [--config JSON] [--json]: run a gate's test cases", runTest},
	"policy": {"policy put|activate|bind|resolve|show --data DIR: manage policy versions", runPolicy},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "govhost: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
	return cmd.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: govhost <command> [flags]")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-8s %s\n", name, commands[name].summary)
	}
}
