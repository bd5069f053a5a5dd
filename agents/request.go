package agents

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// HostFacts answers what only the host can know. Stat reports whether an
// absolute path exists and whether it is a directory; like the host's
// path facts it is a framework boundary, not a TOCTOU-safe check.
type HostFacts interface {
	Stat(path string) (exists, dir bool)
}

// ErrNoHostFacts refuses a translation that needs a host fact (a write's
// operation depends on whether its file exists) when none was given.
var ErrNoHostFacts = errors.New("agents: translating this tool needs host facts (whether its path exists)")

// Request is one governed call a tool event asks for, in the shape the
// controller takes (hooks maps it onto controller.Call field by field):
// the tool id and operation of the dialect's table, the tool input shaped
// as the gates expect it, and the event's correlation as request context.
type Request struct {
	Tool, Operation string
	// Arguments is the governed argument object, decoded once (Decode)
	// and canonicalised and hashed once here: the controller takes it as
	// is (controller.Call.Parsed) and the correlation key reads its digest.
	Arguments governance.Arguments
	// Cwd is the directory relative paths are joined to.
	Cwd                          string
	RunID, AgentName, ToolCallID string
	Metadata                     map[string]string
}

// Request translates a tool event into the governed calls it asks for:
// usually one; Codex's apply_patch asks for one per file it touches, and
// the tool call may run only if every one is allowed.
func (d *Dialect) Request(ev Event, facts HostFacts) ([]Request, error) {
	return d.translate(ev, facts, true)
}

// translate is Request; without withOperation it names no operation and
// asks the host nothing (the correlation key of a post-tool event needs
// the arguments only).
func (d *Dialect) translate(ev Event, facts HostFacts, withOperation bool) ([]Request, error) {
	if ev.ToolName == "" {
		return nil, &MissingFieldError{Agent: d.Agent, Event: ev.Name, Field: "tool_name"}
	}
	input := ev.input
	if input == nil {
		// An event Peek read or one built by hand: its input is decoded
		// here, the only time.
		in, err := decodeToolInput("tool_input", ev.ToolInput)
		if err != nil {
			return nil, d.tag(err)
		}
		input = in
	}
	base := Request{
		Cwd: ev.Cwd, RunID: ev.SessionID, AgentName: string(d.Agent), ToolCallID: ev.ToolUseID,
		Metadata: map[string]string{"agent": string(d.Agent), "hook_event": ev.Name, "agent_tool": ev.ToolName},
	}
	spec, mapped := d.Tools[ev.ToolName]
	if !mapped {
		base.Tool = ev.ToolName
		if server, tool, ok := d.MCP(ev.ToolName); ok {
			base.Tool = MCPToolID(server, tool)
			base.Metadata["mcp_server"], base.Metadata["mcp_tool"] = server, tool
		}
		args, err := governance.NewArguments(input.value, input.order)
		if err != nil {
			return nil, &MalformedError{Agent: d.Agent, Reason: "tool input: " + err.Error()}
		}
		base.Arguments = args
		return []Request{base}, nil
	}
	if spec.Rule == OpByPatch {
		return patchCalls(d.Agent, base, spec, input, ev.Cwd, facts, withOperation)
	}
	args, pathValue, err := shapeArguments(d.Agent, input, spec)
	if err != nil {
		return nil, err
	}
	base.Tool, base.Arguments = spec.Tool, args
	if withOperation {
		if base.Operation, err = operation(spec, pathValue, ev.Cwd, facts); err != nil {
			return nil, err
		}
	}
	return []Request{base}, nil
}

// operation chooses the call's operation, asking the host when the rule
// needs a fact.
func operation(spec ToolSpec, pathValue, cwd string, facts HostFacts) (string, error) {
	switch spec.Rule {
	case OpByExistence, OpByKind:
		if pathValue == "" {
			// No path: the gates deny the missing path; name the
			// operation the tool would have asked for first.
			if spec.Rule == OpByExistence {
				return opCreateFile, nil
			}
			return opSearchFiles, nil
		}
		if facts == nil {
			return "", ErrNoHostFacts
		}
		exists, dir := facts.Stat(absolute(pathValue, cwd))
		if spec.Rule == OpByExistence {
			if exists {
				return opOverwriteFile, nil
			}
			return opCreateFile, nil
		}
		if exists && !dir {
			return opReadFile, nil
		}
		return opSearchFiles, nil
	}
	return spec.Operation, nil
}

// absolute joins a relative path to cwd lexically (no I/O).
func absolute(p, cwd string) string {
	if filepath.IsAbs(p) || cwd == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(cwd, p)
}

// shapeArguments rewrites an agent's decoded tool input into govhost's
// argument names, keeping the agent's key order, and canonicalises and
// hashes the result once: the first present (non-null) PathFrom field
// becomes "path" and the first present CommandFrom field "command"; the
// other aliases are dropped so a gate sees one path. It returns the path
// value when it is a string.
func shapeArguments(agent Agent, input *toolInput, spec ToolSpec) (governance.Arguments, string, error) {
	values := input.value
	rename := map[string]string{}
	drop := map[string]bool{}
	pick := func(from []string, to string) {
		chosen := ""
		for _, k := range from {
			if v, ok := values[k]; ok && v != nil && chosen == "" {
				chosen = k
			}
		}
		for _, k := range from {
			if k != chosen {
				drop[k] = true
			}
		}
		if chosen != "" {
			rename[chosen] = to
			if to != chosen {
				drop[to] = true // the agent's own field of that name gives way
			}
		}
	}
	pick(spec.PathFrom, "path")
	pick(spec.CommandFrom, "command")
	var pathValue string
	shaped := make(map[string]any, len(input.order))
	order := make([]string, 0, len(input.order))
	for _, k := range input.order {
		name := k
		if to, ok := rename[k]; ok {
			name = to
		} else if drop[k] {
			continue
		}
		if name == "path" {
			pathValue, _ = values[k].(string)
		}
		shaped[name] = values[k]
		order = append(order, name)
	}
	args, err := governance.NewArguments(shaped, order)
	if err != nil {
		return governance.Arguments{}, "", &MalformedError{Agent: agent, Reason: "tool input: " + err.Error()}
	}
	return args, pathValue, nil
}

// patchCalls is Codex's apply_patch: the patch text (in "command", as
// Codex sends it) names each file it adds, updates, deletes or moves to;
// each is one governed call carrying the whole patch as "patch" (never as
// "command", which the destructive guard would read as a shell line).
func patchCalls(agent Agent, base Request, spec ToolSpec, input *toolInput, cwd string, facts HostFacts, withOperation bool) ([]Request, error) {
	var text string
	for _, k := range spec.CommandFrom {
		if v, ok := input.value[k]; ok {
			if v != nil {
				s, isString := v.(string)
				if !isString {
					return nil, &MalformedError{Agent: agent, Reason: "apply_patch field " + k + " must be a string"}
				}
				text = s
			}
			break
		}
	}
	files := PatchFiles(text)
	if len(files) == 0 {
		files = []PatchFile{{Action: PatchUpdate}} // no file named: the gates deny the missing path
	}
	calls := make([]Request, 0, len(files))
	for _, f := range files {
		c := base
		c.Metadata = cloneMeta(base.Metadata)
		value, order := map[string]any{"patch": text}, []string{"patch"}
		if f.Path != "" {
			value["path"], order = f.Path, []string{"path", "patch"}
		}
		args, err := governance.NewArguments(value, order)
		if err != nil {
			return nil, &MalformedError{Agent: agent, Reason: "apply_patch: " + err.Error()}
		}
		c.Arguments = args
		switch f.Action {
		case PatchAdd, PatchMoveTo:
			c.Tool = abi.ToolWrite
			if withOperation {
				op, err := operation(writeTool, f.Path, cwd, facts)
				if err != nil {
					return nil, err
				}
				c.Operation = op
			}
		default:
			c.Tool, c.Operation = abi.ToolPatch, opModifyFile
		}
		calls = append(calls, c)
	}
	return calls, nil
}

func cloneMeta(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// PatchAction is what a patch does to one file.
type PatchAction string

// The actions of Codex's patch format.
const (
	PatchAdd    PatchAction = "add"
	PatchUpdate PatchAction = "update"
	PatchDelete PatchAction = "delete"
	PatchMoveTo PatchAction = "move_to"
)

// PatchFile is one file a patch names.
type PatchFile struct {
	Action PatchAction
	Path   string
}

// PatchFiles lists the files a Codex patch names ("*** Add File: p",
// "*** Update File: p", "*** Delete File: p", "*** Move to: p"), in order.
func PatchFiles(text string) []PatchFile {
	headers := []struct {
		prefix string
		action PatchAction
	}{
		{"*** Add File: ", PatchAdd},
		{"*** Update File: ", PatchUpdate},
		{"*** Delete File: ", PatchDelete},
		{"*** Move to: ", PatchMoveTo},
	}
	var out []PatchFile
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range headers {
			if strings.HasPrefix(line, h.prefix) {
				if p := strings.TrimSpace(line[len(h.prefix):]); p != "" {
					out = append(out, PatchFile{Action: h.action, Path: p})
				}
			}
		}
	}
	return out
}
