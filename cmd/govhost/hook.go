package main

import (
	"github.com/spf13/cobra"

	"github.com/govhost/govhost/hookclient"
)

func newHookCmd() *cobra.Command {
	var f hookclient.Flags
	c := &cobra.Command{
		Use:   "hook --agent claude|codex|gemini|cursor|copilot",
		Short: "Command hook for coding agents: hook input on stdin, the sidecar's answer in the agent's dialect",
		Long: `hook reads one hook input of the agent on stdin, asks the govhost sidecar
(one loopback round trip) and prints the agent's own answer with the agent's
exit status: 2 blocks in Claude Code, Codex, Gemini CLI and Cursor (the reason
on stderr); Copilot CLI skips non-zero exits, so it blocks with a deny on 0.

Any failure — sidecar down, timeout, a refused token, a bad answer, an
unreadable input — blocks the tool call with a message saying the gate is
unavailable (not a policy decision). govhost-hook is the same command in a
smaller binary that starts faster.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			code := hookclient.Main(cmd.Context(), f, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if code != 0 {
				return silentExit(code)
			}
			return nil
		},
	}
	c.Flags().StringVar(&f.Agent, "agent", "", "the agent: claude, codex, gemini, cursor or copilot")
	c.Flags().StringVar(&f.Event, "event", "", "the event name, for payloads that carry none (Copilot's camelCase events)")
	c.Flags().StringVar(&f.URL, "url", "", "the sidecar's URL (default $"+hookclient.EnvURL+", else "+hookclient.DefaultURL+")")
	c.Flags().StringVar(&f.TokenFile, "token-file", "", "file holding the sidecar's bearer token (default $"+hookclient.EnvTokenFile+", else $"+hookclient.EnvToken+")")
	c.Flags().DurationVar(&f.Timeout, "timeout", hookclient.DefaultTimeout, "round-trip limit; keep it below the agent's hook timeout")
	_ = c.MarkFlagRequired("agent")
	return c
}
