// Package hookinstall owns the coding agents' settings files as govhost
// writes and checks them: where each agent reads its hooks (user and
// project scope), the entries that send its tool calls to the govhost
// sidecar, merging them into what is there (idempotent, with a backup,
// fail-closed options where the agent has them), and the doctor's checks.
package hookinstall

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/govhost/govhost/agents"
)

// Scope is where an agent's settings live.
type Scope string

const (
	// ScopeUser is the user's own settings (under the home directory).
	ScopeUser Scope = "user"
	// ScopeProject is the project's settings (under the project root).
	ScopeProject Scope = "project"
)

// Target is one agent's hook settings as data.
type Target struct {
	Agent agents.Agent
	// User and Project are the settings file, relative to the home
	// directory and to the project root.
	User, Project string
	// Versioned files carry a top-level "version": 1 (Cursor, Copilot).
	Versioned bool
	// Events are the events govhost needs, in the agent's spelling.
	Events []string
	// Grouped: hooks.<Event> is a list of matcher groups {"hooks": [...]}
	// (Claude Code, Codex, Gemini CLI); otherwise a list of handlers
	// (Cursor, Copilot).
	Grouped bool
	// TimeoutUnit is the unit of the handler's timeout field and
	// TimeoutField its name.
	TimeoutUnit  time.Duration
	TimeoutField string
	// CommandField names the handler's command ("command"; Copilot "bash").
	CommandField string
	// Typed handlers carry "type": "command".
	Typed bool
	// EventFlag: the command names its event (Copilot's camelCase payloads
	// carry none).
	EventFlag bool
	// FailClosed are handler fields that make the agent block when the hook
	// cannot run (Claude Code's onFailure: "block"); nil where the agent has
	// none.
	FailClosed map[string]any
	// FailureBlocks: a hook that cannot run, times out or fails blocks
	// the call (with FailClosed set where the agent needs it); false: the
	// agent runs the tool when its hook fails.
	FailureBlocks bool
	// Note is what the doctor and install say about the agent's failure
	// behaviour.
	Note string
}

// Targets lists every agent's settings.
var Targets = map[agents.Agent]Target{
	agents.Claude: {
		Agent: agents.Claude, User: ".claude/settings.json", Project: ".claude/settings.json",
		Events:  []string{"SessionStart", "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied", "SessionEnd"},
		Grouped: true, TimeoutUnit: time.Second, TimeoutField: "timeout", CommandField: "command", Typed: true,
		FailClosed: map[string]any{"onFailure": "block"}, FailureBlocks: true,
		Note: `onFailure: "block" is set: a hook that cannot start, times out or fails blocks the call (Claude Code 2.1.295 or later)`,
	},
	agents.Codex: {
		Agent: agents.Codex, User: ".codex/hooks.json", Project: ".codex/hooks.json",
		Events:  []string{"SessionStart", "PreToolUse", "PostToolUse", "Stop"},
		Grouped: true, TimeoutUnit: time.Second, TimeoutField: "timeout", CommandField: "command", Typed: true,
		Note: "Codex runs the tool when a hook fails: it has no fail-closed option (openai/codex#41979), so a hook it cannot start or that times out lets the call run; govhost-hook itself blocks on every failure it can see",
	},
	agents.Gemini: {
		Agent: agents.Gemini, User: ".gemini/settings.json", Project: ".gemini/settings.json",
		Events:  []string{"SessionStart", "BeforeTool", "AfterTool", "SessionEnd"},
		Grouped: true, TimeoutUnit: time.Millisecond, TimeoutField: "timeout", CommandField: "command", Typed: true,
		FailureBlocks: true,
		Note:          "Gemini CLI blocks on exit status 2 or more, so a hook that cannot start (exit 127) or fails blocks the call; exit 1 is only a warning, and govhost-hook never uses it for a pre-tool event",
	},
	agents.Cursor: {
		Agent: agents.Cursor, User: ".cursor/hooks.json", Project: ".cursor/hooks.json", Versioned: true,
		Events:      []string{"sessionStart", "preToolUse", "postToolUse", "postToolUseFailure", "sessionEnd"},
		TimeoutUnit: time.Second, TimeoutField: "timeout", CommandField: "command",
		FailClosed: map[string]any{"failClosed": true}, FailureBlocks: true,
		Note: "failClosed: true is set: a hook that cannot run, times out or prints no answer blocks the call",
	},
	agents.Copilot: {
		Agent: agents.Copilot, User: ".copilot/hooks/govhost.json", Project: ".github/hooks/govhost.json", Versioned: true,
		Events:      []string{"sessionStart", "preToolUse", "postToolUse", "postToolUseFailure", "sessionEnd"},
		TimeoutUnit: time.Second, TimeoutField: "timeoutSec", CommandField: "bash", Typed: true, EventFlag: true,
		Note: "Copilot CLI runs the tool when a hook fails: hooks that fail or time out are skipped and never block; govhost-hook answers a deny on exit 0 for every failure it can see",
	},
}

// Lookup returns the target of agent.
func Lookup(agent agents.Agent) (Target, error) {
	t, ok := Targets[agent]
	if !ok {
		return Target{}, &agents.UnknownAgentError{Agent: string(agent)}
	}
	return t, nil
}

// Path is the settings file of scope: under home for ScopeUser, under
// project for ScopeProject.
func (t Target) Path(scope Scope, home, project string) (string, error) {
	switch scope {
	case ScopeUser:
		if home == "" {
			return "", errors.New("hookinstall: no home directory")
		}
		return filepath.Join(home, t.User), nil
	case ScopeProject:
		if project == "" {
			return "", errors.New("hookinstall: no project directory")
		}
		return filepath.Join(project, t.Project), nil
	}
	return "", fmt.Errorf("hookinstall: unknown scope %q (want user or project)", scope)
}
