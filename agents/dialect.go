package agents

import (
	"sort"
)

// Agent names a coding agent, as `govhost hook --agent NAME` spells it.
type Agent string

// The agents with a dialect.
const (
	Claude  Agent = "claude"
	Codex   Agent = "codex"
	Gemini  Agent = "gemini"
	Cursor  Agent = "cursor"
	Copilot Agent = "copilot"
)

// Kind is what an agent's event means for govhost.
type Kind string

const (
	// KindSessionStart opens the session's task.
	KindSessionStart Kind = "session_start"
	// KindSessionEnd closes the session's task and certifies it.
	KindSessionEnd Kind = "session_end"
	// KindPreTool asks for a decision before a tool runs: authorize.
	KindPreTool Kind = "pre_tool"
	// KindPostTool reports a tool that ran: complete its permit.
	KindPostTool Kind = "post_tool"
	// KindToolFailed reports a tool that started and failed: complete its
	// permit as failed.
	KindToolFailed Kind = "tool_failed"
	// KindToolNotRun reports an authorized tool call that will not run
	// (the agent's own permission system denied it): complete its permit
	// as failed, so the task can still be certified.
	KindToolNotRun Kind = "tool_not_run"
	// KindObserve is every other event: govhost has no opinion and
	// answers so that the agent proceeds unchanged.
	KindObserve Kind = "observe"
)

// Fields names the JSON keys of one payload format. A list holds
// alternatives, first present wins.
type Fields struct {
	Event        []string
	Session      []string
	Cwd          []string
	Roots        string // a list of workspace roots; the first is the cwd when Cwd is absent
	ToolName     []string
	ToolInput    []string
	ToolUseID    []string
	ToolResponse []string
	Error        []string
}

// EventSpec is one documented event of a dialect.
type EventSpec struct {
	Kind Kind
	// Tool, when set, is the agent tool the event stands for: events such
	// as Cursor's beforeShellExecution carry the tool's input as top-level
	// fields (InputFields) instead of tool_name / tool_input.
	Tool        string
	InputFields []string
	// MCPServerless marks events whose tool_name is an MCP tool's bare
	// name with no server (Cursor's beforeMCPExecution).
	MCPServerless bool
	// Failed, when set, reports a KindPostTool payload that describes a
	// failed tool, with its error class.
	Failed func(p payload) (failed bool, class string)
}

// Format is one payload format of a dialect: its field names and events.
// Copilot CLI has two (camelCase, and snake_case with PascalCase event
// names); the others have one.
type Format struct {
	Name   string
	Fields Fields
	Events map[string]EventSpec
}

// Dialect is one agent's hook contract as data.
type Dialect struct {
	Agent Agent
	// Source is where the contract is documented.
	Source  string
	Formats []Format
	// Tools maps the agent's tool names onto govhost's vocabulary; a
	// name with no row keeps its own name.
	Tools map[string]ToolSpec
	// MCP splits an MCP tool name into server and tool.
	MCP func(name string) (server, tool string, ok bool)
	// Style says how the agent reads a decision.
	Style AnswerStyle
	// CanAsk: the agent can turn a "require approval" into its own prompt.
	CanAsk bool
	// ExplicitAllow: the agent accepts an explicit allow (else an allow is
	// always "no opinion").
	ExplicitAllow bool
	// BlockExit is the command-hook exit status that blocks a tool call.
	// Copilot CLI skips hooks that exit non-zero, so its block is a deny
	// answer on exit status 0.
	BlockExit int
	// HTTP: the agent has an HTTP hook type (only Claude Code).
	HTTP bool
	// SystemMessage: the agent shows a top-level "systemMessage" to the
	// user on any event (Claude Code, Codex, Gemini CLI).
	SystemMessage bool
}

var dialects = map[Agent]*Dialect{}

func register(d *Dialect) *Dialect {
	dialects[d.Agent] = d
	return d
}

// Lookup returns the dialect of agent.
func Lookup(agent Agent) (*Dialect, error) {
	d, ok := dialects[agent]
	if !ok {
		return nil, &UnknownAgentError{Agent: string(agent)}
	}
	return d, nil
}

// Agents lists the agents with a dialect, sorted.
func Agents() []Agent {
	out := make([]Agent, 0, len(dialects))
	for a := range dialects {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// EventNames lists every documented event of the dialect, sorted, each
// once (Copilot's two formats name some events twice).
func (d *Dialect) EventNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range d.Formats {
		for name := range f.Events {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// EventKind returns what event means in this dialect; an undocumented
// event is KindObserve (agents add events; an unknown one is accepted).
func (d *Dialect) EventKind(event string) Kind {
	for _, f := range d.Formats {
		if spec, ok := f.Events[event]; ok {
			return spec.Kind
		}
	}
	return KindObserve
}

// PreToolEvent is the dialect's general pre-tool event name (PreToolUse,
// BeforeTool, preToolUse): what an unreadable hook input is answered as,
// since it is blocked as a tool call would be.
func (d *Dialect) PreToolEvent() string {
	var names []string
	for _, f := range d.Formats {
		for name, spec := range f.Events {
			if spec.Kind == KindPreTool && spec.Tool == "" && !spec.MCPServerless {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}
