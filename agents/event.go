package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/govhost/govhost/governance"
)

// Event is one hook payload read in its agent's dialect.
type Event struct {
	Agent  Agent
	Format string
	// Name is the event's name as the agent spells it.
	Name string
	Kind Kind
	// SessionID identifies the agent session (Cursor: the conversation).
	SessionID string
	// Cwd is the session's working directory, the task's workspace root.
	Cwd string
	// ToolName is the agent's tool name; ToolInput its arguments, always
	// a JSON object.
	ToolName  string
	ToolInput json.RawMessage
	// input is ToolInput decoded by Decode (decodeToolInput), the one
	// decode of a tool event's arguments: Request reshapes it without
	// reading ToolInput again. Nil on an event Peek read or one built by
	// hand.
	input *toolInput
	// inputField names ToolInput's field, for messages.
	inputField string
	// ToolUseID is the agent's id of the tool call, when it sends one
	// (Claude Code, Codex, Cursor's preToolUse); see CorrelationKey.
	ToolUseID string
	// Response is the tool's result as the agent reported it; only its
	// digest is ever recorded (ResponseDigest).
	Response json.RawMessage
	// FailureClass is set on a failed or not-run tool: a short class,
	// never the error text.
	FailureClass string
	// inputQuoted: the agent sent ToolInput as a JSON-encoded string,
	// which the payload's strict check saw as text only.
	inputQuoted bool

	spec EventSpec
}

// payload is a hook input's top-level object; unknown fields stay in it,
// unread (agents add fields).
type payload map[string]json.RawMessage

// str returns the first of keys present as a JSON string. A key present
// with another type is malformed; null counts as absent.
func (p payload) str(keys ...string) (string, bool, error) {
	for _, k := range keys {
		raw, ok := p[k]
		if !ok || isNull(raw) {
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, &MalformedError{Reason: "field " + k + " must be a string"}
		}
		return s, true, nil
	}
	return "", false, nil
}

// raw returns the first of keys present and not null.
func (p payload) raw(keys ...string) (string, json.RawMessage) {
	for _, k := range keys {
		if v, ok := p[k]; ok && !isNull(v) {
			return k, v
		}
	}
	return "", nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// readPayload decodes body as exactly one JSON object.
func readPayload(body []byte) (payload, error) {
	if !utf8.Valid(body) {
		return nil, &MalformedError{Reason: "input is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var p payload
	if err := dec.Decode(&p); err != nil {
		if err == io.EOF {
			return nil, &MalformedError{Reason: "empty input"}
		}
		return nil, &MalformedError{Reason: "not a JSON object: " + err.Error()}
	}
	if p == nil {
		return nil, &MalformedError{Reason: "not a JSON object"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &MalformedError{Reason: "more than one JSON value"}
	}
	return p, nil
}

// Decode reads body as the dialect's hook input. event names the event
// when the payload does not (Copilot CLI's camelCase payloads carry no
// event name: `govhost install` passes it as --event); a name in the
// payload wins. Unknown fields are accepted; an undocumented event is
// KindObserve. A tool event's input is decoded here, once: Request and
// CorrelationKey work on what Decode read. An input JSON readers could read
// differently (a key twice, invalid UTF-8, another case of a field the
// dialect reads) is an *AmbiguousError (checkStrict).
func (d *Dialect) Decode(event string, body []byte) (Event, error) {
	ev, err := d.read(event, body, d.checkStrict)
	if err == nil && ev.ToolInput != nil && ev.inputQuoted {
		err = checkStrictInput(ev.inputField, ev.ToolInput)
	}
	if err == nil && ev.ToolInput != nil {
		ev.input, err = decodeToolInput(ev.inputField, ev.ToolInput)
	}
	if err != nil {
		return Event{}, d.tag(err)
	}
	return ev, nil
}

// Peek reads body as Decode does, except that a tool event's input is
// checked to be a JSON object but not decoded, and the strict check of
// duplicate keys is left to the sidecar. The command hook reads its input
// with Peek to name the event, and to answer for it when the sidecar
// cannot; the sidecar decodes the arguments, once. (Peek does not reach
// governance's JSON reader, so govhost-hook does not link it.)
func (d *Dialect) Peek(event string, body []byte) (Event, error) {
	ev, err := d.read(event, body, nil)
	if err == nil && ev.ToolInput != nil && !isObjectText(ev.ToolInput) {
		err = &MalformedError{Reason: "field " + ev.inputField + " must be a JSON object"}
	}
	if err != nil {
		return Event{}, d.tag(err)
	}
	return ev, nil
}

// read is Decode up to a tool event's input, left as text; strict, when
// not nil, checks the payload before it is read.
func (d *Dialect) read(event string, body []byte, strict func([]byte, payload) error) (Event, error) {
	if !utf8.Valid(body) {
		return Event{}, &AmbiguousError{Reason: "input is not valid UTF-8"}
	}
	p, err := readPayload(body)
	if err != nil {
		return Event{}, err
	}
	if strict != nil {
		if err := strict(body, p); err != nil {
			return Event{}, err
		}
	}
	return d.decode(event, p)
}

func (d *Dialect) tag(err error) error {
	switch e := err.(type) {
	case *MalformedError:
		e.Agent = d.Agent
	case *MissingFieldError:
		e.Agent = d.Agent
	case *AmbiguousError:
		e.Agent = d.Agent
	}
	return err
}

func (d *Dialect) decode(hint string, p payload) (Event, error) {
	format, name, err := d.format(hint, p)
	if err != nil {
		return Event{}, err
	}
	f := format.Fields
	spec, documented := format.Events[name]
	if !documented {
		spec = EventSpec{Kind: KindObserve}
		if preToolShaped(p, f) {
			// An event name no format documents (a typo, a newer agent)
			// that asks about a tool call is governed as a pre-tool event:
			// answering it "no opinion" would let "rm -rf /" through.
			spec = EventSpec{Kind: KindPreTool}
		}
	}
	ev := Event{Agent: d.Agent, Format: format.Name, Name: name, Kind: spec.Kind, spec: spec}
	if ev.SessionID, _, err = p.str(f.Session...); err != nil {
		return Event{}, err
	}
	if ev.Cwd, err = cwdOf(p, f); err != nil {
		return Event{}, err
	}
	if ev.Kind == KindObserve {
		return ev, nil
	}
	if ev.SessionID == "" {
		return Event{}, &MissingFieldError{Event: name, Field: first(f.Session)}
	}
	if ev.Kind == KindSessionStart || ev.Kind == KindSessionEnd {
		return ev, nil
	}
	if err := d.decodeTool(&ev, p, f); err != nil {
		return Event{}, err
	}
	switch {
	case ev.Kind == KindToolFailed:
		ev.FailureClass = failureClass(p)
	case ev.Kind == KindToolNotRun:
		ev.FailureClass = "not_run"
	case ev.Kind == KindPostTool && spec.Failed != nil:
		if failed, class := spec.Failed(p); failed {
			ev.Kind, ev.FailureClass = KindToolFailed, class
		}
	}
	return ev, nil
}

// preToolShaped reports a payload that names a tool and its input and
// carries no response or error: the shape of a question before a tool
// runs, whatever its event is called.
func preToolShaped(p payload, f Fields) bool {
	name, ok, err := p.str(f.ToolName...)
	if err != nil || !ok || name == "" {
		return false
	}
	if _, input := p.raw(f.ToolInput...); input == nil {
		return false
	}
	if _, resp := p.raw(f.ToolResponse...); resp != nil {
		return false
	}
	_, failure := p.raw(f.Error...)
	return failure == nil
}

// format finds the payload's format and event name.
func (d *Dialect) format(hint string, p payload) (Format, string, error) {
	for _, f := range d.Formats {
		name, ok, err := p.str(f.Fields.Event...)
		if err != nil {
			return Format{}, "", err
		}
		if ok && name != "" {
			if _, known := f.Events[name]; known {
				return f, name, nil
			}
		}
	}
	// A name no format documents: keep it, read with the first format
	// that has an event field of that name.
	for _, f := range d.Formats {
		if name, ok, _ := p.str(f.Fields.Event...); ok && name != "" {
			return f, name, nil
		}
	}
	if hint != "" {
		for _, f := range d.Formats {
			if _, known := f.Events[hint]; known {
				return f, hint, nil
			}
		}
		return d.Formats[0], hint, nil
	}
	return Format{}, "", &MissingFieldError{Field: first(d.Formats[0].Fields.Event)}
}

func (d *Dialect) decodeTool(ev *Event, p payload, f Fields) error {
	spec := ev.spec
	key := "tool_input"
	if spec.Tool != "" {
		ev.ToolName = spec.Tool
		obj := map[string]json.RawMessage{}
		for _, k := range spec.InputFields {
			if v, ok := p[k]; ok {
				obj[k] = v
			}
		}
		input, err := json.Marshal(obj)
		if err != nil {
			return &MalformedError{Reason: err.Error()}
		}
		ev.ToolInput = input
	} else {
		name, ok, err := p.str(f.ToolName...)
		if err != nil {
			return err
		}
		if !ok || name == "" {
			return &MissingFieldError{Event: ev.Name, Field: first(f.ToolName)}
		}
		ev.ToolName = name
		var raw json.RawMessage
		key, raw = p.raw(f.ToolInput...)
		if ev.ToolInput, err = toolInputText(key, raw); err != nil {
			return err
		}
		ev.inputQuoted = len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] == '"'
	}
	ev.inputField = key
	if spec.MCPServerless {
		ev.ToolName = MCPToolID("", ev.ToolName)
	}
	id, _, err := p.str(f.ToolUseID...)
	if err != nil {
		return err
	}
	ev.ToolUseID = id
	_, ev.Response = p.raw(f.ToolResponse...)
	return nil
}

// toolInputText returns a tool's arguments as JSON text, not yet checked
// to be an object. Absent means {}; a string holding JSON is unwrapped
// (Copilot CLI's older toolArgs and Cursor's MCP tool_input are
// JSON-encoded strings).
func toolInputText(key string, raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return json.RawMessage("{}"), nil
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '"' {
		var s string
		if err := json.Unmarshal(trimmed, &s); err != nil {
			return nil, &MalformedError{Reason: "field " + key + ": " + err.Error()}
		}
		trimmed = bytes.TrimSpace([]byte(s))
		if len(trimmed) == 0 {
			return json.RawMessage("{}"), nil
		}
	}
	return json.RawMessage(trimmed), nil
}

// toolInput is a tool's input decoded: the argument object (numbers as
// json.Number) and its keys in the agent's order.
type toolInput struct {
	value map[string]any
	order []string
}

// decodeToolInput is the one decode of a tool event's arguments (through
// governance.DecodeArguments, the reader the controller would use): every
// later step reshapes the decoded object, and the governed arguments are
// canonicalised and hashed once from it (Request).
func decodeToolInput(key string, text json.RawMessage) (*toolInput, error) {
	value, order, err := governance.DecodeArguments(text)
	switch {
	case errors.Is(err, governance.ErrArgumentsNotObject):
		return nil, &MalformedError{Reason: "field " + key + " must be a JSON object"}
	case err != nil:
		return nil, &MalformedError{Reason: "field " + key + " must be a JSON object: " + err.Error()}
	}
	return &toolInput{value: value, order: order}, nil
}

// isObjectText reports JSON text that is one object, without decoding it.
func isObjectText(text json.RawMessage) bool {
	return len(text) > 0 && text[0] == '{' && json.Valid(text)
}

func cwdOf(p payload, f Fields) (string, error) {
	cwd, ok, err := p.str(f.Cwd...)
	if err != nil || ok {
		return cwd, err
	}
	if f.Roots == "" {
		return "", nil
	}
	raw, present := p[f.Roots]
	if !present || isNull(raw) {
		return "", nil
	}
	var roots []string
	if err := json.Unmarshal(raw, &roots); err != nil {
		return "", &MalformedError{Reason: "field " + f.Roots + " must be a list of strings"}
	}
	if len(roots) == 0 {
		return "", nil
	}
	return roots[0], nil
}

// failureClass is a short class for a failed tool, never its error text:
// "interrupt" when the agent says the tool was aborted, else the agent's
// own failure type when it sends one, else "tool_error".
func failureClass(p payload) string {
	var interrupt bool
	if raw, ok := p["is_interrupt"]; ok && json.Unmarshal(raw, &interrupt) == nil && interrupt {
		return "interrupt"
	}
	if t, ok, _ := p.str("failure_type"); ok && isClass(t) {
		return strings.ToLower(t)
	}
	return "tool_error"
}

// isClass accepts short identifier-like strings only (the controller's
// error-class alphabet once lowercased), so an agent's free text never
// reaches evidence as a class.
func isClass(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func first(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}
