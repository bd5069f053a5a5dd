package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hookclient"
	"github.com/govhost/govhost/hookinstall"
	"github.com/govhost/govhost/policy/profiles"
)

// hookEndpoint is the sidecar a hook is installed for: its URL and token.
type hookEndpoint struct {
	url, tokenFile, data *string
}

func endpointFlags(c *cobra.Command) hookEndpoint {
	def := os.Getenv(hookclient.EnvURL)
	if def == "" {
		def = hookclient.DefaultURL
	}
	return hookEndpoint{
		url:       c.Flags().String("url", def, "the sidecar's URL (default $"+hookclient.EnvURL+" when set)"),
		tokenFile: c.Flags().String("token-file", "", "the sidecar's bearer token file (default DATA/token)"),
		data:      dataFlag(c),
	}
}

// token returns the absolute token file path.
func (e hookEndpoint) token() (string, error) {
	p := *e.tokenFile
	if p == "" {
		p = filepath.Join(*e.data, "token")
	}
	return filepath.Abs(p)
}

func newInstallCmd() *cobra.Command {
	var agent, scope, project, hook, binary, profile string
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "install --agent claude|codex|gemini|cursor|copilot [--scope user|project]",
		Short: "Write govhost's hooks into a coding agent's settings (merged, idempotent, with a backup)",
		Long: `install adds govhost's hook entries to the agent's settings file — user scope
(under your home) or project scope (under --project) — keeping every other
setting and hook, replacing govhost's own entries in place (a second run
changes nothing) and backing the file up first when it changes.

Claude Code gets its HTTP hook (POST URL/v1/hooks/claude-code, token from
$GOVHOST_TOKEN, onFailure "block") unless --hook command; the other agents get
the command hook (govhost-hook, or govhost hook) with --token-file. The
agent's hook timeout (--timeout, default 60s) is 5 s longer than the command
hook's own limit, so the hook blocks before the agent gives up on it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return nil
		},
	}
	ep := endpointFlags(c)
	c.Flags().StringVar(&agent, "agent", "", "the agent: claude, codex, gemini, cursor or copilot")
	c.Flags().StringVar(&scope, "scope", "user", "user (your home) or project")
	c.Flags().StringVar(&project, "project", ".", "the project root, for --scope project")
	c.Flags().StringVar(&hook, "hook", "", "http or command (default: http for claude, command for the others)")
	c.Flags().StringVar(&binary, "hook-binary", "", "the command hook (default: govhost-hook next to this govhost, else this govhost's hook command)")
	c.Flags().DurationVar(&timeout, "timeout", hookinstall.DefaultAgentTimeout, "the agent's hook timeout")
	c.Flags().StringVar(&profile, "profile", "", "record the default policy profile (strict, balanced or permissive) the sidecar's first start installs, in the data directory of --token-file")
	_ = c.MarkFlagRequired("agent")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		home, err := os.UserHomeDir()
		if err != nil && scope == string(hookinstall.ScopeUser) {
			return usageError(err)
		}
		proj, err := filepath.Abs(project)
		if err != nil {
			return usageError(err)
		}
		tokenFile, err := ep.token()
		if err != nil {
			return usageError(err)
		}
		o := hookinstall.Options{Agent: agents.Agent(agent), Scope: hookinstall.Scope(scope), Home: home, Project: proj,
			URL: *ep.url, TokenFile: tokenFile, Timeout: timeout}
		switch hook {
		case "":
			o.HTTP = o.Agent == agents.Claude
		case "http":
			o.HTTP = true
		case "command":
		default:
			return usageErrorf("--hook %q: want http or command", hook)
		}
		if !o.HTTP {
			if o.HookCommand, err = hookCommand(binary); err != nil {
				return usageError(err)
			}
		}
		if profile != "" {
			if err := profiles.Record(profile, *ep.data); err != nil {
				return usageError(err)
			}
		}
		res, err := hookinstall.Install(o)
		if err != nil {
			return usageError(err)
		}
		out := cmd.OutOrStdout()
		switch {
		case !res.Changed:
			fmt.Fprintf(out, "%s: already installed in %s (unchanged)\n", agent, res.Path)
		case res.Backup != "":
			fmt.Fprintf(out, "%s: installed in %s (backup %s)\n", agent, res.Path, res.Backup)
		default:
			fmt.Fprintf(out, "%s: installed in %s\n", agent, res.Path)
		}
		fmt.Fprintf(out, "  %s\n", res.Note)
		if profile != "" {
			fmt.Fprintf(out, "  default policy profile %s recorded in %s (a first govhost serve --data %s installs it)\n", profile, *ep.data, *ep.data)
		}
		if o.HTTP {
			fmt.Fprintf(out, "  export %s=$(cat %s) in the shell that starts the agent\n", hookinstall.TokenEnv, tokenFile)
		}
		return nil
	}
	return c
}

// hookCommand is the command hook's argv prefix: --hook-binary, else
// govhost-hook beside this executable, else govhost-hook on PATH (where
// `make install` puts it), else this executable's hook command.
func hookCommand(binary string) ([]string, error) {
	if binary != "" {
		abs, err := filepath.Abs(binary)
		if err != nil {
			return nil, err
		}
		if filepath.Base(abs) == "govhost" {
			return []string{abs, "hook"}, nil
		}
		return []string{abs}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this executable (give --hook-binary): %w", err)
	}
	if side := filepath.Join(filepath.Dir(self), "govhost-hook"); fileExists(side) {
		return []string{side}, nil
	}
	if onPath, err := exec.LookPath("govhost-hook"); err == nil {
		if abs, err := filepath.Abs(onPath); err == nil {
			return []string{abs}, nil
		}
	}
	return []string{self, "hook"}, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
