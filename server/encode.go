package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
)

// writeJSON writes v as the response body, in one write. The hot
// routes' bodies, whose shape is fixed, are written without reflection
// (appendAuthorizeResult, appendCompleted); everything else through one
// reused encoder.
func writeJSON(w http.ResponseWriter, status int, v any) {
	a := governance.GetJSONBuffer(false)
	defer a.Release()
	switch v := v.(type) {
	case api.AuthorizeResult:
		a.Write(appendAuthorizeResult(a.AvailableBuffer(), &v))
	case api.Completed:
		a.Write(appendCompleted(a.AvailableBuffer(), &v))
	default:
		_ = a.Encode(v)
	}
	writeBody(w, status, a.Bytes())
}

// writeBody writes a JSON body that is ready, in one Write: net/http then
// sends a small body with its length (no chunking).
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// jsonContentType is every JSON answer's Content-Type (shared, read-only).
var jsonContentType = []string{"application/json"}

// appendAuthorizeResult appends what encoding/json writes for r (with
// HTML escaping off, and its trailing newline): byte for byte, as
// TestEncode_SameAsEncodingJSON checks.
func appendAuthorizeResult(b []byte, r *api.AuthorizeResult) []byte {
	b = append(b, `{"decision":`...)
	b = abi.AppendString(b, r.Decision)
	if p := r.Permit; p != nil {
		b = append(b, `,"permit":{"permit_id":`...)
		b = abi.AppendString(b, p.PermitID)
		b = append(b, `,"operation_id":`...)
		b = appendUUID(b, p.OperationID)
		b = append(b, `,"task_id":`...)
		b = appendUUID(b, p.TaskID)
		b = append(b, `,"tool":`...)
		b = abi.AppendString(b, p.Tool)
		b = append(b, `,"argument_digest":`...)
		b = abi.AppendString(b, p.ArgumentDigest)
		b = append(b, `,"arguments":`...)
		b = appendRaw(b, p.Arguments)
		b = append(b, `,"expires_at":`...)
		b = appendTime(b, p.ExpiresAt)
		b = append(b, '}')
	}
	if d := r.Denial; d != nil {
		b = append(b, `,"denial":{"operation_id":`...)
		b = abi.AppendString(b, d.OperationID)
		if d.GateID != "" {
			b = append(b, `,"gate_id":`...)
			b = abi.AppendString(b, d.GateID)
		}
		b = append(b, `,"reason_code":`...)
		b = abi.AppendString(b, d.ReasonCode)
		if d.Message != "" {
			b = append(b, `,"message":`...)
			b = abi.AppendString(b, d.Message)
		}
		b = append(b, '}')
	}
	if r.AuthorizationID != "" {
		b = append(b, `,"authorization_id":`...)
		b = abi.AppendString(b, r.AuthorizationID)
	}
	if r.ApprovalID != "" {
		b = append(b, `,"approval_id":`...)
		b = abi.AppendString(b, r.ApprovalID)
	}
	return append(b, "}\n"...)
}

// appendCompleted appends what encoding/json writes for c.
func appendCompleted(b []byte, c *api.Completed) []byte {
	b = append(b, `{"permit_id":`...)
	b = abi.AppendString(b, c.PermitID)
	b = append(b, `,"recorded":`...)
	b = strconv.AppendBool(b, c.Recorded)
	return append(b, "}\n"...)
}

// appendUUID appends id as a JSON string.
func appendUUID(b []byte, id uuid.UUID) []byte {
	b = governance.AppendUUID(append(b, '"'), id)
	return append(b, '"')
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendRaw appends a raw JSON value as encoding/json does: compacted, and
// null when empty.
func appendRaw(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	var out bytes.Buffer
	if isCompact(raw) {
		return append(b, raw...)
	}
	out.Grow(len(raw))
	if err := json.Compact(&out, raw); err != nil {
		return append(b, "null"...)
	}
	return append(b, out.Bytes()...)
}

// isCompact reports whether raw has no whitespace outside strings (the
// controller's canonical arguments never have).
func isCompact(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}
