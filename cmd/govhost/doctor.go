package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hookclient"
	"github.com/govhost/govhost/hookinstall"
)

func init() { register("", newDoctorCmd) }

func newDoctorCmd() *cobra.Command {
	var project string
	var sidecar time.Duration
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check the sidecar, its token and every installed agent hook",
		Long: `doctor checks that the sidecar answers at --url, that the token in
--token-file is accepted, and, for every agent with govhost hooks in its user
or project settings, that each needed event has its hook, that it points at
the sidecar, that its timeout is longer than the sidecar's (--sidecar-timeout:
an agent that gives up on a hook lets the call run) and that fail-closed
options are set where the agent has them. Exit 1 when anything is wrong.`,
		Args: cobra.NoArgs,
	}
	ep := endpointFlags(c)
	c.Flags().StringVar(&project, "project", ".", "the project root whose project-scope settings to check")
	c.Flags().DurationVar(&sidecar, "sidecar-timeout", hookclient.DefaultTimeout, "the longest the sidecar or the command hook may take to answer")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		out := cmd.OutOrStdout()
		ok := true
		tokenFile, err := ep.token()
		if err != nil {
			return usageError(err)
		}
		if msg, good := probeSidecar(cmd.Context(), *ep.url, tokenFile); good {
			fmt.Fprintf(out, "ok    sidecar %s: %s\n", *ep.url, msg)
		} else {
			ok = false
			fmt.Fprintf(out, "FAIL  sidecar %s: %s\n", *ep.url, msg)
		}
		home, _ := os.UserHomeDir()
		proj, _ := filepath.Abs(project)
		installed := 0
		for _, agent := range agents.Agents() {
			t, _ := hookinstall.Lookup(agent)
			for _, scope := range []hookinstall.Scope{hookinstall.ScopeUser, hookinstall.ScopeProject} {
				ch := hookinstall.Inspect(t, scope, home, proj, *ep.url, sidecar)
				if !ch.Installed && ch.OK() {
					continue
				}
				installed++
				if ch.OK() {
					fmt.Fprintf(out, "ok    %s (%s) %s\n", agent, scope, ch.Path)
					continue
				}
				ok = false
				fmt.Fprintf(out, "FAIL  %s (%s) %s\n", agent, scope, ch.Path)
				for _, p := range ch.Problems {
					fmt.Fprintf(out, "        %s\n", p)
				}
			}
		}
		if installed == 0 {
			fmt.Fprintln(out, "note  no agent has govhost hooks installed (govhost install --agent NAME)")
		}
		if !ok {
			return silentExit(exitInvalid)
		}
		return nil
	}
	return c
}

// probeSidecar sends an event govhost only observes (no session, so no
// task is opened) through the hook endpoint with the token.
func probeSidecar(ctx context.Context, url, tokenFile string) (string, bool) {
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		return "token file: " + err.Error(), false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(url, "/")+"/v1/hooks/claude",
		bytes.NewReader([]byte(`{"hook_event_name":"Notification","message":"govhost doctor"}`)))
	if err != nil {
		return err.Error(), false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(raw)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "not reachable: " + err.Error(), false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode == http.StatusOK:
		return "up, token accepted, hook endpoint answers", true
	case resp.StatusCode == http.StatusUnauthorized:
		return "up, but the token in " + tokenFile + " is refused", false
	default:
		return fmt.Sprintf("hook endpoint answered %d: %s", resp.StatusCode, strings.TrimSpace(string(body))), false
	}
}
