package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hookclient"
	"github.com/govhost/govhost/hookinstall"
)

// doctorReport is `govhost doctor --json`.
type doctorReport struct {
	OK      bool          `json:"ok"`
	Sidecar sidecarReport `json:"sidecar"`
	Agents  []agentReport `json:"agents"`
}

type sidecarReport struct {
	URL     string `json:"url"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// agentReport is one installed settings file: its static problems, the
// canary sent through it, and what the agent does when its hook fails.
type agentReport struct {
	Agent    string        `json:"agent"`
	Scope    string        `json:"scope"`
	Path     string        `json:"path"`
	OK       bool          `json:"ok"`
	Problems []string      `json:"problems"`
	Canary   *canaryReport `json:"canary,omitempty"`
	// OnHookFailure is "blocks" or "runs the tool".
	OnHookFailure string `json:"on_hook_failure"`
	Note          string `json:"note"`
}

type canaryReport struct {
	Event   string `json:"event"`
	Via     string `json:"via"` // the command or "POST URL"
	Blocked bool   `json:"blocked"`
	// Exit is the command's exit status; Status the HTTP hook's.
	Exit   *int   `json:"exit,omitempty"`
	Status int    `json:"status,omitempty"`
	Detail string `json:"detail"`
}

func newDoctorCmd() *cobra.Command {
	var project string
	var sidecar time.Duration
	var asJSON bool
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Prove that every installed agent hook blocks a destructive call",
		Long: `doctor checks that the sidecar answers at --url with the token in --token-file,
and then, for every agent with govhost hooks in its user or project settings:

  - the settings: each needed event has its hook, pointing at the sidecar,
    with a timeout longer than the sidecar's (--sidecar-timeout) and the
    agent's fail-closed option set (Claude Code onFailure "block", Cursor
    failClosed: true);
  - the canary: it runs exactly the command (or sends exactly the HTTP
    request, headers expanded the way the agent expands them) that the
    settings name for the pre-tool event, with a synthetic "rm -rf /" call
    in the agent's own payload format, and checks the answer blocks it in
    the shape the agent honours (exit status or deny answer). A block that
    only comes from the hook failing (sidecar down, token refused) is a
    failure: every call would be blocked. The canary's session is closed
    after;
  - what the agent does when a hook fails: Claude Code, Cursor and Gemini
    CLI block; Codex and Copilot CLI run the tool.

Exit 1 naming the agent and the reason when anything is wrong.`,
		Args: cobra.NoArgs,
	}
	ep := endpointFlags(c)
	c.Flags().StringVar(&project, "project", ".", "the project root whose project-scope settings to check (and the canary's working directory)")
	c.Flags().DurationVar(&sidecar, "sidecar-timeout", hookclient.DefaultTimeout, "the longest the sidecar or the command hook may take to answer")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		tokenFile, err := ep.token()
		if err != nil {
			return usageError(err)
		}
		rep := doctorReport{OK: true}
		msg, good := probeSidecar(cmd.Context(), *ep.url, tokenFile)
		rep.Sidecar = sidecarReport{URL: *ep.url, OK: good, Message: msg}
		rep.OK = good
		home, _ := os.UserHomeDir()
		proj, _ := filepath.Abs(project)
		for _, agent := range agents.Agents() {
			t, _ := hookinstall.Lookup(agent)
			for _, scope := range []hookinstall.Scope{hookinstall.ScopeUser, hookinstall.ScopeProject} {
				ch := hookinstall.Inspect(t, scope, home, proj, *ep.url, sidecar)
				if !ch.Installed && ch.OK() {
					continue
				}
				ar := agentReport{Agent: string(agent), Scope: string(scope), Path: ch.Path, Problems: append([]string{}, ch.Problems...),
					OnHookFailure: "runs the tool", Note: t.Note}
				if t.FailureBlocks {
					ar.OnHookFailure = "blocks"
				}
				if ch.Installed {
					probe, ok := ch.Canary("govhost-doctor-"+uuid.NewString(), proj)
					if !ok {
						ar.Problems = append(ar.Problems, "no pre-tool hook to send the canary through")
					} else {
						cr, problem := runCanary(cmd.Context(), probe, proj, sidecar+hookinstall.ClientMargin)
						ar.Canary = &cr
						if problem != "" {
							ar.Problems = append(ar.Problems, problem)
						}
					}
				}
				ar.OK = len(ar.Problems) == 0
				rep.OK = rep.OK && ar.OK
				rep.Agents = append(rep.Agents, ar)
			}
		}
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if err := enc.Encode(rep); err != nil {
				return err
			}
		} else {
			printDoctor(cmd.OutOrStdout(), rep)
		}
		if !rep.OK {
			for _, ar := range rep.Agents {
				if !ar.OK {
					fmt.Fprintf(cmd.ErrOrStderr(), "govhost doctor: %s (%s): %s\n", ar.Agent, ar.Scope, strings.Join(ar.Problems, "; "))
				}
			}
			if !rep.Sidecar.OK {
				fmt.Fprintf(cmd.ErrOrStderr(), "govhost doctor: sidecar %s: %s\n", rep.Sidecar.URL, rep.Sidecar.Message)
			}
			return silentExit(exitInvalid)
		}
		return nil
	}
	return c
}

func printDoctor(out io.Writer, rep doctorReport) {
	mark := func(ok bool) string {
		if ok {
			return "ok  "
		}
		return "FAIL"
	}
	fmt.Fprintf(out, "%s  sidecar %s: %s\n", mark(rep.Sidecar.OK), rep.Sidecar.URL, rep.Sidecar.Message)
	for _, ar := range rep.Agents {
		fmt.Fprintf(out, "%s  %s (%s) %s\n", mark(ar.OK), ar.Agent, ar.Scope, ar.Path)
		if ar.Canary != nil {
			fmt.Fprintf(out, "        canary %s %q via %s: %s\n", ar.Canary.Event, agents.CanaryCommand, ar.Canary.Via, ar.Canary.Detail)
		}
		for _, p := range ar.Problems {
			fmt.Fprintf(out, "        %s\n", p)
		}
		fmt.Fprintf(out, "        when the hook fails, %s %s: %s\n", ar.Agent, ar.OnHookFailure, ar.Note)
	}
	if len(rep.Agents) == 0 {
		fmt.Fprintln(out, "note  no agent has govhost hooks installed (govhost install --agent NAME)")
	}
}

// runCanary sends the probe's destructive call through the installed
// handler and judges the answer in the agent's contract; problem is empty
// when it blocks by a policy decision.
func runCanary(ctx context.Context, p hookinstall.Probe, cwd string, limit time.Duration) (canaryReport, string) {
	d, _ := agents.Lookup(p.Agent)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	rep := canaryReport{Event: p.Event}
	defer func() {
		// Close the canary's session, so it leaves a closed task.
		if p.EndEvent != "" {
			_, _, _, _ = sendHook(ctx, p.EndHandler, p.EndInput, cwd)
		}
	}()
	if p.Handler.URL != "" {
		rep.Via = "POST " + p.Handler.URL
		headers, unset := p.Handler.ExpandHeaders(nil)
		status, body, err := postHook(ctx, p.Handler.URL, headers, p.Input)
		rep.Status = status
		switch {
		case err != nil:
			rep.Detail = err.Error()
			return rep, "the HTTP hook cannot reach the sidecar: " + err.Error()
		case len(unset) > 0 && status == http.StatusUnauthorized:
			rep.Detail = fmt.Sprintf("%d: the agent would send an empty bearer", status)
			return rep, fmt.Sprintf("token unreachable: $%s is not set in this environment, so %s sends an empty bearer and the sidecar refuses every call (401); export %s=$(cat DATA/token) in the shell that starts the agent",
				strings.Join(unset, ", $"), p.Agent, strings.Join(unset, ", "))
		case status == http.StatusUnauthorized:
			rep.Detail = fmt.Sprintf("%d: token refused", status)
			return rep, "token unreachable: the sidecar refuses the token the HTTP hook sends (401)"
		case status != http.StatusOK:
			rep.Detail = fmt.Sprintf("HTTP %d: %s", status, firstLine(string(body)))
			return rep, fmt.Sprintf("the HTTP hook fails (%d); the call is blocked only because the hook fails, so every call would be", status)
		case d.DeniesIn(body):
			rep.Blocked = true
			rep.Detail = "denied: " + reasonOf(body)
			return rep, ""
		}
		rep.Detail = "answered " + firstLine(string(body))
		return rep, "the installed HTTP hook does not block a destructive call (" + rep.Detail + ")"
	}
	rep.Via = p.Handler.Command
	exit, stdout, stderr, err := sendHook(ctx, p.Handler, p.Input, cwd)
	if err != nil {
		rep.Detail = err.Error()
		return rep, "the installed command could not be run: " + err.Error()
	}
	rep.Exit = &exit
	blocked := d.Blocks(exit, stdout)
	unavailable := strings.Contains(string(stdout)+string(stderr), "govhost gate unavailable")
	switch {
	case blocked && !unavailable:
		rep.Blocked = true
		reason := reasonOf(stdout)
		if reason == "" {
			reason = firstLine(string(stderr))
		}
		rep.Detail = fmt.Sprintf("blocked (exit %d): %s", exit, reason)
		return rep, ""
	case unavailable:
		cause := firstLine(string(stderr))
		if cause == "" {
			cause = reasonOf(stdout)
		}
		rep.Blocked = blocked
		rep.Detail = fmt.Sprintf("exit %d: %s", exit, cause)
		if strings.Contains(cause, "401") || strings.Contains(cause, "token") {
			return rep, "token unreachable: the installed command cannot authenticate to the sidecar (" + cause + ")"
		}
		return rep, "the installed command cannot reach the sidecar, so every call is blocked (" + cause + ")"
	}
	rep.Detail = fmt.Sprintf("exit %d, stdout %q, stderr %q", exit, firstLine(string(stdout)), firstLine(string(stderr)))
	return rep, "the installed command does not block a destructive call (" + rep.Detail + ")"
}

// sendHook runs a command handler the way agents do (sh -c, the input on
// stdin, in cwd) or posts to an HTTP one; for HTTP, exit is the status.
func sendHook(ctx context.Context, h hookinstall.Handler, input []byte, cwd string) (exit int, stdout, stderr []byte, err error) {
	if h.URL != "" {
		headers, _ := h.ExpandHeaders(nil)
		status, body, err := postHook(ctx, h.URL, headers, input)
		return status, body, nil, err
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", h.Command)
	cmd.Dir = cwd
	cmd.Stdin = bytes.NewReader(input)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 0 {
		return ee.ExitCode(), out.Bytes(), errs.Bytes(), nil
	}
	if err != nil {
		return 0, out.Bytes(), errs.Bytes(), err
	}
	return 0, out.Bytes(), errs.Bytes(), nil
}

func postHook(ctx context.Context, url string, headers map[string]string, input []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(input))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, nil
}

// reasonOf finds the reason text of a deny answer in any agent's shape.
func reasonOf(body []byte) string {
	var a struct {
		HookSpecificOutput struct {
			Reason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
		Reason       string `json:"reason"`
		AgentMessage string `json:"agent_message"`
		Flat         string `json:"permissionDecisionReason"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &a) != nil {
		return ""
	}
	for _, s := range []string{a.HookSpecificOutput.Reason, a.Reason, a.AgentMessage, a.Flat} {
		if s != "" {
			return firstLine(s)
		}
	}
	return ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// probeSidecar sends an event govhost only observes (no session, so no
// task is opened) to Claude Code's HTTP hook path — the URL `install`
// writes — with the token file's token.
func probeSidecar(ctx context.Context, url, tokenFile string) (string, bool) {
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		return "token file: " + err.Error(), false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	status, body, err := postHook(ctx, strings.TrimRight(url, "/")+hookinstall.ClaudeHTTPPath,
		map[string]string{"Authorization": "Bearer " + strings.TrimSpace(string(raw))},
		[]byte(`{"hook_event_name":"Notification","message":"govhost doctor"}`))
	switch {
	case err != nil:
		return "not reachable: " + err.Error(), false
	case status == http.StatusOK:
		return "up, token in " + tokenFile + " accepted, hook endpoint answers", true
	case status == http.StatusUnauthorized:
		return "up, but the token in " + tokenFile + " is refused", false
	default:
		return fmt.Sprintf("hook endpoint answered %d: %s", status, firstLine(string(body))), false
	}
}
