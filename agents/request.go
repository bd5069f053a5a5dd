package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
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

// Request translates a tool event into the governed calls it asks for:
// usually one; Codex's apply_patch asks for one per file it touches, and
// the tool call may run only if every one is allowed.
func (d *Dialect) Request(ev Event, facts HostFacts) ([]controller.Call, error) {
	if ev.ToolName == "" {
		return nil, &MissingFieldError{Agent: d.Agent, Event: ev.Name, Field: "tool_name"}
	}
	input := ev.ToolInput
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	base := controller.Call{
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
		base.Arguments = input
		return []controller.Call{base}, nil
	}
	if spec.Rule == OpByPatch {
		return patchCalls(d.Agent, base, spec, input, ev.Cwd, facts)
	}
	args, pathValue, err := shapeArguments(d.Agent, input, spec)
	if err != nil {
		return nil, err
	}
	op, err := operation(spec, pathValue, ev.Cwd, facts)
	if err != nil {
		return nil, err
	}
	base.Tool, base.Operation, base.Arguments = spec.Tool, op, args
	return []controller.Call{base}, nil
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

// shapeArguments rewrites an agent's tool input into govhost's argument
// names, keeping the agent's key order: the first present PathFrom field
// becomes "path" and the first present CommandFrom field "command"; the
// other aliases are dropped so a gate sees one path. It returns the path
// value when it is a string.
func shapeArguments(agent Agent, input json.RawMessage, spec ToolSpec) (json.RawMessage, string, error) {
	keys, values, err := objectFields(input)
	if err != nil {
		return nil, "", &MalformedError{Agent: agent, Reason: "tool input: " + err.Error()}
	}
	rename := map[string]string{}
	drop := map[string]bool{}
	pick := func(from []string, to string) {
		chosen := ""
		for _, k := range from {
			if _, ok := values[k]; ok && !isNull(values[k]) && chosen == "" {
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
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	for _, k := range keys {
		name := k
		if to, ok := rename[k]; ok {
			name = to
		} else if drop[k] {
			continue
		}
		if name == "path" {
			_ = json.Unmarshal(values[k], &pathValue)
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		quoted, _ := json.Marshal(name)
		buf.Write(quoted)
		buf.WriteByte(':')
		buf.Write(values[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), pathValue, nil
}

// objectFields returns a JSON object's keys in order and their raw values;
// a repeated key keeps its first position and its last value.
func objectFields(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, seen := values[key]; !seen {
			keys = append(keys, key)
		}
		values[key] = v
	}
	return keys, values, nil
}

// patchCalls is Codex's apply_patch: the patch text (in "command", as
// Codex sends it) names each file it adds, updates, deletes or moves to;
// each is one governed call carrying the whole patch as "patch" (never as
// "command", which the destructive guard would read as a shell line).
func patchCalls(agent Agent, base controller.Call, spec ToolSpec, input json.RawMessage, cwd string, facts HostFacts) ([]controller.Call, error) {
	_, values, err := objectFields(input)
	if err != nil {
		return nil, &MalformedError{Agent: agent, Reason: "tool input: " + err.Error()}
	}
	var text string
	for _, k := range spec.CommandFrom {
		if v, ok := values[k]; ok {
			if err := json.Unmarshal(v, &text); err != nil {
				return nil, &MalformedError{Agent: agent, Reason: "apply_patch field " + k + " must be a string"}
			}
			break
		}
	}
	files := PatchFiles(text)
	if len(files) == 0 {
		files = []PatchFile{{Action: PatchUpdate}} // no file named: the gates deny the missing path
	}
	patchJSON, _ := json.Marshal(text)
	calls := make([]controller.Call, 0, len(files))
	for _, f := range files {
		c := base
		c.Metadata = cloneMeta(base.Metadata)
		var args bytes.Buffer
		args.WriteByte('{')
		if f.Path != "" {
			p, _ := json.Marshal(f.Path)
			args.WriteString(`"path":`)
			args.Write(p)
			args.WriteByte(',')
		}
		args.WriteString(`"patch":`)
		args.Write(patchJSON)
		args.WriteByte('}')
		c.Arguments = args.Bytes()
		switch f.Action {
		case PatchAdd, PatchMoveTo:
			c.Tool = abi.ToolWrite
			op, err := operation(writeTool, f.Path, cwd, facts)
			if err != nil {
				return nil, err
			}
			c.Operation = op
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
