package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kind classifies one JSON-RPC message line.
type Kind int

const (
	// KindInvalid is a line that is JSON but not a JSON-RPC 2.0 message
	// (JSON-RPC's "Invalid Request").
	KindInvalid Kind = iota
	KindRequest
	KindNotification
	KindResponse
	KindBatch
)

// ErrParse is a line that is not JSON at all (JSON-RPC's "Parse error").
var ErrParse = errors.New("mcp: line is not JSON")

// Message is what the relay needs to know about one line: the envelope
// fields, each still as its raw bytes. The line itself is what is
// forwarded; a Message is never re-encoded.
type Message struct {
	Kind   Kind
	Method string
	// ID is the raw id (`1`, `"abc"`); empty for a notification.
	ID     json.RawMessage
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	// Batch holds the elements of a batch, each parsed the same way.
	Batch []Message
	// Raw is the element's own bytes (for batch elements).
	Raw json.RawMessage
}

// envelope is the JSON-RPC 2.0 wire shape. A raw member is empty when
// missing and "null" when null.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Parse classifies one line. A line that is not JSON (or not UTF-8) is
// ErrParse; a JSON value that is not a JSON-RPC 2.0 message is KindInvalid
// with whatever id could be read.
func Parse(line []byte) (Message, error) {
	line = bytes.TrimSpace(line)
	if !utf8.Valid(line) || !json.Valid(line) {
		return Message{}, ErrParse
	}
	if len(line) > 0 && line[0] == '[' {
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil {
			return Message{}, ErrParse
		}
		m := Message{Kind: KindBatch, Raw: line}
		if len(elems) == 0 {
			m.Kind = KindInvalid // JSON-RPC: an empty batch is one Invalid Request
		}
		for _, e := range elems {
			m.Batch = append(m.Batch, parseOne(e))
		}
		return m, nil
	}
	return parseOne(line), nil
}

func parseOne(raw json.RawMessage) Message {
	m := Message{Kind: KindInvalid, Raw: raw}
	var env envelope
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &env) != nil {
		return m
	}
	hasID := len(env.ID) > 0
	if hasID {
		if !validID(env.ID) {
			return m
		}
		m.ID = env.ID
	}
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		return m
	}
	hasResult, hasError := len(env.Result) > 0, len(env.Error) > 0
	switch {
	case len(env.Method) > 0:
		if json.Unmarshal(env.Method, &m.Method) != nil || hasResult || hasError {
			return m
		}
		m.Params = env.Params
		switch {
		case !hasID:
			m.Kind = KindNotification
		case string(env.ID) != "null": // MCP: a request id is never null
			m.Kind = KindRequest
		}
	case hasID && hasResult != hasError:
		m.Kind = KindResponse
		m.Result, m.Error = env.Result, env.Error
	}
	return m
}

// validID: a string, a number or null (null only in error responses).
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"', 'n':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// idKey is the key a request id is tracked under: a string's raw text, a
// number's shortest spelling (a JavaScript peer that parsed `1.0` echoes
// `1`).
func idKey(id json.RawMessage) string {
	if len(id) > 0 && id[0] != '"' {
		if f, err := strconv.ParseFloat(string(id), 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return string(id)
}

// nullID is the id of an error response to a request whose id could not be
// read.
var nullID = json.RawMessage("null")

// wireResponse is a JSON-RPC response the proxy itself writes. The id is
// copied byte for byte from the request.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
}

// errorResponse encodes a JSON-RPC error response.
func errorResponse(id json.RawMessage, code int64, message string) []byte {
	if len(id) == 0 {
		id = nullID
	}
	b, _ := json.Marshal(wireResponse{JSONRPC: "2.0", ID: id, Error: &jsonrpc.Error{Code: code, Message: message}})
	return b
}

// resultResponse encodes a JSON-RPC success response.
func resultResponse(id json.RawMessage, result any) ([]byte, error) {
	return json.Marshal(wireResponse{JSONRPC: "2.0", ID: id, Result: result})
}

// deniedResult is the tool result a denied call gets: isError with the
// gate's model-facing text, so the model sees why (MCP: tool errors are
// results, not protocol errors).
func deniedResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// callParams decodes tools/call params with the SDK's raw form (arguments
// kept as bytes).
func callParams(params json.RawMessage) (sdk.CallToolParamsRaw, error) {
	var p sdk.CallToolParamsRaw
	if err := json.Unmarshal(params, &p); err != nil {
		return p, err
	}
	if strings.TrimSpace(p.Name) == "" {
		return p, errors.New("tools/call without a tool name")
	}
	return p, nil
}

// cancelledRequest returns the request id a notifications/cancelled names.
func cancelledRequest(params json.RawMessage) (json.RawMessage, bool) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || !validID(p.RequestID) {
		return nil, false
	}
	return p.RequestID, true
}

// toolResultIsError reads isError from a tools/call result.
func toolResultIsError(result json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}
