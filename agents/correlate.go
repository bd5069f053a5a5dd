package agents

import (
	"bytes"
	"encoding/json"

	"github.com/govhost/govhost/governance"
)

// CorrelationKey pairs a post-tool event with the pre-tool event of the
// same call. With the agent's tool_use_id it is "id:<tool_use_id>".
// Gemini CLI, Copilot CLI and Cursor's shell, MCP and read events send no
// id: their key is "input:<sha256 of the tool name and the digests of the
// event's governed arguments>", the same before and after the call because
// both carry the original input; the sidecar queues identical keys first
// in, first out. calls are the event's requests as Request returned them:
// a pre-tool event has them, so its arguments are not read or hashed
// again; nil translates the event's arguments here (a post-tool event),
// asking the host nothing.
func (d *Dialect) CorrelationKey(ev Event, calls []Request) (string, error) {
	if ev.ToolUseID != "" {
		return "id:" + ev.ToolUseID, nil
	}
	if calls == nil {
		var err error
		if calls, err = d.translate(ev, nil, false); err != nil {
			return "", err
		}
	}
	text := make([]byte, 0, len(ev.ToolName)+len(calls)*65)
	text = append(text, ev.ToolName...)
	for _, c := range calls {
		text = append(append(text, '\n'), c.Arguments.Digest...)
	}
	return "input:" + governance.SHA256Hex(text), nil
}

// ResponseDigest is the sha256 of the tool's reported result (canonical
// JSON where the result is canonical-able, else its compacted bytes), or
// "" when the event carries none. The result itself is never recorded.
func ResponseDigest(ev Event) string {
	if len(bytes.TrimSpace(ev.Response)) == 0 {
		return ""
	}
	return governance.SHA256Hex(stableJSON(ev.Response))
}

// stableJSON is one stable text for a JSON value: the controller's
// canonical argument form (sorted keys; a float kept as written), applied
// to the value wrapped as {"v": value} so a string or list result is read
// the same way as an object; raw compacted if it is not JSON at all. (It
// goes through governance.ParseArguments, so governance.ArgumentWork
// counts a post-tool event's result as one more parse.)
func stableJSON(raw json.RawMessage) []byte {
	wrapped := make([]byte, 0, len(raw)+6)
	wrapped = append(append(append(wrapped, `{"v":`...), raw...), '}')
	if args, err := governance.ParseArguments(wrapped); err == nil {
		return args.Canonical
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}
