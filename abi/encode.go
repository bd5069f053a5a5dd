package abi

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"
)

// ErrBadRawJSON is returned when GateInput.Arguments or GateOutput.Arguments
// is not one valid JSON value.
var ErrBadRawJSON = errors.New("abi: arguments are not valid JSON")

// AppendGateInput appends the JSON of in to dst, with the field names and
// omissions of encoding/json (map keys sorted, no HTML escaping), without
// reflection. Empty Arguments encode as null.
func AppendGateInput(dst []byte, in *GateInput) ([]byte, error) {
	dst = append(dst, `{"abi_version":`...)
	dst = strconv.AppendInt(dst, int64(in.ABIVersion), 10)
	dst = appendField(dst, "gate_id", in.GateID)
	dst = appendField(dst, "phase", string(in.Phase))
	dst = appendField(dst, "tool", in.Tool)
	dst = appendOptional(dst, "operation", in.Operation)
	dst = appendOptional(dst, "action", in.Action)
	dst = append(dst, `,"arguments":`...)
	var err error
	if dst, err = appendRaw(dst, in.Arguments, true); err != nil {
		return dst, err
	}
	if len(in.ArgumentOrder) > 0 {
		dst = append(dst, `,"argument_order":[`...)
		for i, a := range in.ArgumentOrder {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, a)
		}
		dst = append(dst, ']')
	}
	dst = appendOptional(dst, "cwd", in.Cwd)
	dst = appendOptional(dst, "workspace", in.Workspace)
	if len(in.Paths) > 0 {
		dst = append(dst, `,"paths":[`...)
		for i := range in.Paths {
			p := &in.Paths[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"arg":`...)
			dst = AppendString(dst, p.Arg)
			dst = appendField(dst, "raw", p.Raw)
			dst = appendField(dst, "resolved", p.Resolved)
			dst = append(dst, `,"exists":`...)
			dst = strconv.AppendBool(dst, p.Exists)
			dst = appendField(dst, "kind", string(p.Kind))
			dst = appendField(dst, "nearest_existing", p.NearestExisting)
			if p.Link {
				dst = append(dst, `,"link":true`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	c := &in.Context
	dst = append(dst, `,"context":{`...)
	n := len(dst)
	dst = appendOptional(dst, "operation_id", c.OperationID)
	if c.Actor != nil {
		dst = append(dst, `,"actor":{"kind":`...)
		dst = AppendString(dst, c.Actor.Kind)
		dst = appendField(dst, "id", c.Actor.ID)
		dst = append(dst, '}')
	}
	dst = appendOptional(dst, "run_id", c.RunID)
	dst = appendOptional(dst, "agent_name", c.AgentName)
	dst = appendOptional(dst, "tool_call_id", c.ToolCallID)
	if len(c.Metadata) > 0 {
		dst = append(dst, `,"metadata":{`...)
		keys := make([]string, 0, len(c.Metadata))
		for k := range c.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			dst = AppendString(dst, c.Metadata[k])
		}
		dst = append(dst, '}')
	}
	if c.Assignments != nil {
		dst = append(dst, `,"assignments":[`...)
		for i, a := range *c.Assignments {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"actor":{"kind":`...)
			dst = AppendString(dst, a.Actor.Kind)
			dst = appendField(dst, "id", a.Actor.ID)
			dst = append(dst, `},"duty":`...)
			dst = AppendString(dst, a.Duty)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(dst) > n { // drop the comma before the first member
		copy(dst[n:], dst[n+1:])
		dst = dst[:len(dst)-1]
	}
	return append(dst, "}}"...), nil
}

// AppendGateOutput appends the JSON of out to dst, with the field names and
// omissions of encoding/json, without reflection.
func AppendGateOutput(dst []byte, out *GateOutput) ([]byte, error) {
	dst = append(dst, `{"decision":`...)
	dst = AppendString(dst, string(out.Decision))
	dst = appendField(dst, "reason_code", out.ReasonCode)
	dst = appendOptional(dst, "detail", out.Detail)
	dst = appendOptional(dst, "message", out.Message)
	dst = appendOptional(dst, "matched_rule", out.MatchedRule)
	dst = appendOptional(dst, "deny_message", out.DenyMessage)
	if len(out.Arguments) > 0 {
		dst = append(dst, `,"arguments":`...)
		var err error
		if dst, err = appendRaw(dst, out.Arguments, false); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func appendField(dst []byte, name, v string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return AppendString(dst, v)
}

func appendOptional(dst []byte, name, v string) []byte {
	if v == "" {
		return dst
	}
	return appendField(dst, name, v)
}

func appendRaw(dst, raw []byte, nullIfEmpty bool) ([]byte, error) {
	if len(raw) == 0 && nullIfEmpty {
		return append(dst, "null"...), nil
	}
	if !ValidJSON(raw) {
		return dst, ErrBadRawJSON
	}
	return appendCompact(dst, raw), nil
}

// appendCompact appends valid JSON without the whitespace between tokens,
// as encoding/json does with a RawMessage.
func appendCompact(dst, raw []byte) []byte {
	if !bytes.ContainsAny(raw, " \t\r\n") {
		return append(dst, raw...)
	}
	inString := false
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\r' || c == '\n'):
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as with encoding/json; '<', '>' and '&' are not escaped.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// The scan of the decoder's string loops (rawStr): the bytes that
		// need no escape are copied in runs.
		i = scanPlain(s, i)
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' { // as encoding/json, for JavaScript readers
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
