// Command govhost-hook is the command hook alone: `govhost hook` in a
// binary that links no store and no Wasm runtime, so an agent that starts
// a process per tool call pays a few milliseconds, not the full govhost's
// start. Same flags, same answers, same exit statuses.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/govhost/govhost/hookclient"
)

func main() {
	var f hookclient.Flags
	fs := flag.NewFlagSet("govhost-hook", flag.ContinueOnError)
	fs.StringVar(&f.Agent, "agent", "", "the agent: claude, codex, gemini, cursor or copilot")
	fs.StringVar(&f.Event, "event", "", "the event name, for payloads that carry none (Copilot's camelCase events)")
	fs.StringVar(&f.URL, "url", "", "the sidecar's URL (default $"+hookclient.EnvURL+", else "+hookclient.DefaultURL+")")
	fs.StringVar(&f.TokenFile, "token-file", "", "file holding the sidecar's bearer token (default $"+hookclient.EnvTokenFile+", else $"+hookclient.EnvToken+")")
	fs.DurationVar(&f.Timeout, "timeout", hookclient.DefaultTimeout, "round-trip limit; keep it below the agent's hook timeout")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2) // a hook that cannot start blocks
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "govhost-hook: unexpected argument %q; the tool call is blocked\n", fs.Arg(0))
		os.Exit(2)
	}
	if f.Agent == "" {
		fmt.Fprintln(os.Stderr, "govhost-hook: --agent is required; the tool call is blocked")
		os.Exit(2)
	}
	os.Exit(hookclient.Main(context.Background(), f, os.Stdin, os.Stdout, os.Stderr))
}
