package agents

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// CanaryCommand is the destructive command of a canary call: a hook that
// lets it through does not guard the agent.
const CanaryCommand = "rm -rf /"

// CanaryInput is a pre-tool hook input of this dialect, in the format that
// documents event, asking to run CanaryCommand with the agent's shell tool
// in session (cwd as the working directory). `govhost doctor` sends it
// through exactly what an agent's settings name.
func (d *Dialect) CanaryInput(event, session, cwd string) ([]byte, error) {
	f, ok := d.formatOf(event)
	if !ok || f.Events[event].Kind != KindPreTool {
		return nil, fmt.Errorf("agents: %s has no pre-tool event %q", d.Agent, event)
	}
	in := map[string]any{}
	if spec := f.Events[event]; spec.Tool != "" {
		// Events standing for one tool carry its input at the top level.
		for _, k := range spec.InputFields {
			in[k] = CanaryCommand
		}
	} else {
		in[first(f.Fields.ToolName)] = d.shellToolName()
		in[first(f.Fields.ToolInput)] = map[string]any{"command": CanaryCommand}
	}
	in[first(f.Fields.Event)] = event
	in[first(f.Fields.Session)] = session
	in[first(f.Fields.Cwd)] = cwd
	if f.Fields.Roots != "" {
		in[f.Fields.Roots] = []string{cwd}
	}
	if id := first(f.Fields.ToolUseID); id != "" {
		in[id] = "govhost-doctor-canary"
	}
	return json.Marshal(in)
}

// EndInput is the session-end hook input of the format that documents
// event, closing what a canary opened; ok is false when the format has no
// session end.
func (d *Dialect) EndInput(event, session, cwd string) (name string, body []byte, ok bool) {
	f, found := d.formatOf(event)
	if !found {
		return "", nil, false
	}
	var names []string
	for n, spec := range f.Events {
		if spec.Kind == KindSessionEnd {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", nil, false
	}
	sort.Strings(names)
	in := map[string]any{first(f.Fields.Event): names[0], first(f.Fields.Session): session, first(f.Fields.Cwd): cwd}
	body, _ = json.Marshal(in)
	return names[0], body, true
}

// Blocks reports whether a command hook that exited with exit and printed
// stdout blocks a pre-tool call in this agent's documented contract: the
// blocking exit status (Gemini CLI: any status of 2 or more), or exit 0
// with a deny in the agent's answer shape. An "ask" is not a block: the
// person may let the call run.
func (d *Dialect) Blocks(exit int, stdout []byte) bool {
	switch {
	case d.BlockExit != 0 && exit == d.BlockExit:
		return true
	case d.Agent == Gemini && exit >= 2:
		return true
	case exit != 0:
		return false
	}
	return d.DeniesIn(stdout)
}

// DeniesIn reports whether body is a deny answer in the agent's shape.
func (d *Dialect) DeniesIn(body []byte) bool {
	var a struct {
		HookSpecificOutput struct {
			PermissionDecision string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
		Decision           string `json:"decision"`
		Permission         string `json:"permission"`
		PermissionDecision string `json:"permissionDecision"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(string(body))), &a) != nil {
		return false
	}
	switch d.Style {
	case StyleDecision:
		return a.Decision == string(Deny) || a.Decision == "block"
	case StylePermission:
		return a.Permission == string(Deny)
	case StyleFlat:
		return a.PermissionDecision == string(Deny)
	default:
		return a.HookSpecificOutput.PermissionDecision == string(Deny)
	}
}

// formatOf returns the format that documents event.
func (d *Dialect) formatOf(event string) (Format, bool) {
	for _, f := range d.Formats {
		if _, ok := f.Events[event]; ok {
			return f, true
		}
	}
	return Format{}, false
}

// shellToolName is the agent's own name of its shell tool (sorted first
// when it has several: Bash before PowerShell).
func (d *Dialect) shellToolName() string {
	var names []string
	for name, spec := range d.Tools {
		if spec.Operation == opExecuteCommand {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "bash"
	}
	return names[0]
}
