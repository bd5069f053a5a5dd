package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"unicode/utf8"
)

// The request metadata headers of the Streamable HTTP transport (MCP
// 2026-07-28, "Request Metadata"): mirrored from the body so that
// intermediaries can route without parsing it. A server that processes
// the body must reject a request whose headers disagree with it.
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
	headerSessionID       = "Mcp-Session-Id"
	// metaProtocolVersion is the body's copy of the protocol version
	// (params._meta).
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// headersRequiredSince is the first revision that requires the
	// metadata headers on every POST.
	headersRequiredSince = "2026-07-28"
)

// CodeHeaderMismatch is the JSON-RPC error code (HeaderMismatch) for
// request headers that are missing, malformed or do not match the body;
// the HTTP status is 400.
const CodeHeaderMismatch = -32020

// headerMismatch is one failed header check, in the spec's words.
type headerMismatch struct{ text string }

func (e *headerMismatch) Error() string { return "Header mismatch: " + e.text }

func mismatch(format string, args ...any) error {
	return &headerMismatch{fmt.Sprintf(format, args...)}
}

// checkRequestHeaders validates a POST's metadata headers against its
// body. Headers the client did not send are not invented, except that a
// client speaking 2026-07-28 or later must send Mcp-Method, and whoever
// sends Mcp-Method on tools/call, resources/read or prompts/get must send
// Mcp-Name. govhost governs on the body; this check keeps any component
// behind it that routes on the headers from being told a different story.
func checkRequestHeaders(h http.Header, msg Message) error {
	version, hasVersion, err := single(h, headerProtocolVersion)
	if err != nil {
		return err
	}
	method, hasMethod, err := single(h, headerMethod)
	if err != nil {
		return err
	}
	name, hasName, err := single(h, headerName)
	if err != nil {
		return err
	}
	isCall := msg.Kind == KindRequest || msg.Kind == KindNotification
	if hasVersion && isCall {
		var params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if len(msg.Params) > 0 && json.Unmarshal(msg.Params, &params) == nil {
			if v, ok := params.Meta[metaProtocolVersion]; ok {
				var body string
				if json.Unmarshal(v, &body) != nil || body != version {
					return mismatch("%s header value '%s' does not match body value %s", headerProtocolVersion, version, v)
				}
			}
		}
	}
	if !hasMethod {
		if isCall && hasVersion && version >= headersRequiredSince {
			return mismatch("%s header is required by protocol version %s", headerMethod, version)
		}
		if hasName {
			return mismatch("%s header without %s", headerName, headerMethod)
		}
		return nil
	}
	if !isCall {
		return mismatch("%s header on a message that is not a request or notification", headerMethod)
	}
	if method != msg.Method {
		return mismatch("%s header value '%s' does not match body value '%s'", headerMethod, method, msg.Method)
	}
	bodyName, named := nameOf(msg)
	switch {
	case named && !hasName:
		return mismatch("%s header is required for %s", headerName, msg.Method)
	case !named && hasName:
		return mismatch("%s header on %s, which names nothing", headerName, msg.Method)
	case named:
		decoded, err := decodeHeaderValue(headerName, name)
		if err != nil {
			return err
		}
		if decoded != bodyName {
			return mismatch("%s header value '%s' does not match body value '%s'", headerName, name, bodyName)
		}
	}
	return nil
}

// single returns a header's one value; the same header twice is refused
// (two readers could each pick a different one).
func single(h http.Header, key string) (string, bool, error) {
	vs := h.Values(key)
	switch len(vs) {
	case 0:
		return "", false, nil
	case 1:
	default:
		return "", true, mismatch("%s header sent %d times", key, len(vs))
	}
	for _, r := range vs[0] {
		if r != '\t' && (r < 0x20 || r > 0x7e) {
			return "", true, mismatch("%s header value has invalid characters", key)
		}
	}
	return vs[0], true, nil
}

// nameOf is the body value Mcp-Name mirrors: params.name of tools/call
// and prompts/get, params.uri of resources/read.
func nameOf(msg Message) (string, bool) {
	member := ""
	switch msg.Method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	default:
		return "", false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg.Params, &params) != nil {
		return "", true
	}
	var v string
	_ = json.Unmarshal(params[member], &v)
	return v, true
}

// decodeHeaderValue undoes the spec's Base64 sentinel ("=?base64?…?="),
// which carries values that are not plain header-safe ASCII.
func decodeHeaderValue(key, v string) (string, error) {
	if !strings.HasPrefix(v, "=?base64?") || !strings.HasSuffix(v, "?=") || len(v) < len("=?base64??=") {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-len("?=")])
	if err != nil || !utf8.Valid(b) {
		return "", mismatch("%s header value '%s' is not valid Base64 of UTF-8", key, v)
	}
	return string(b), nil
}

// paramHeaderPrefix starts the headers a tool's inputSchema asks clients
// to mirror arguments into (x-mcp-header: "Region" → Mcp-Param-Region).
const paramHeaderPrefix = "Mcp-Param-"

// paramHeaders reads a tool's x-mcp-header declarations from its
// inputSchema: header name (lower case, after Mcp-Param-) → the argument's
// property path. Only chains of "properties" count (the spec's "statically
// reachable"); a declaration elsewhere is not one.
func paramHeaders(schema json.RawMessage) map[string][]string {
	var out map[string][]string
	var walk func(raw json.RawMessage, path []string)
	walk = func(raw json.RawMessage, path []string) {
		var node struct {
			Header     *string                    `json:"x-mcp-header"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(raw, &node) != nil {
			return
		}
		if node.Header != nil && len(path) > 0 && *node.Header != "" {
			if out == nil {
				out = map[string][]string{}
			}
			out[strings.ToLower(*node.Header)] = append([]string(nil), path...)
		}
		for name, p := range node.Properties {
			walk(p, append(path, name))
		}
	}
	walk(schema, nil)
	return out
}

// checkParamHeaders validates a tools/call's Mcp-Param-* headers against
// its arguments, for the headers its tool declares: a declared header
// must carry the argument's value (strings as they are, integers compared
// as numbers, booleans as true/false; Base64 sentinel undone), must be
// absent when the argument is, and, from a client that sends the metadata
// headers (Mcp-Method), must be present when the argument is. Headers no
// tool declares are relayed and otherwise ignored.
func checkParamHeaders(h http.Header, msg Message, declared map[string][]string) error {
	if len(declared) == 0 {
		return nil
	}
	var params struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(msg.Params, &params)
	sent := map[string]bool{}
	for key := range h {
		ck := http.CanonicalHeaderKey(key)
		if !strings.HasPrefix(ck, paramHeaderPrefix) {
			continue
		}
		name := strings.ToLower(ck[len(paramHeaderPrefix):])
		path, ok := declared[name]
		if !ok {
			continue
		}
		sent[name] = true
		v, _, err := single(h, ck)
		if err != nil {
			return err
		}
		if v, err = decodeHeaderValue(ck, v); err != nil {
			return err
		}
		body, present := argumentAt(params.Arguments, path)
		if !present {
			return mismatch("%s header sent, but the arguments have no %s", ck, strings.Join(path, "."))
		}
		if !sameValue(v, body) {
			return mismatch("%s header value '%s' does not match body value %s", ck, v, body)
		}
	}
	if len(h.Values(headerMethod)) == 0 {
		return nil
	}
	for name, path := range declared {
		if _, present := argumentAt(params.Arguments, path); present && !sent[name] {
			return mismatch("%s%s header is required: the arguments carry %s", paramHeaderPrefix, name, strings.Join(path, "."))
		}
	}
	return nil
}

// argumentAt is the value at a property path of the arguments; null counts
// as absent.
func argumentAt(args json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for _, p := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		next, ok := obj[p]
		if !ok {
			return nil, false
		}
		cur = next
	}
	if len(cur) == 0 || string(cur) == "null" {
		return nil, false
	}
	return cur, true
}

// sameValue compares a header's text with a primitive argument.
func sameValue(header string, body json.RawMessage) bool {
	switch body[0] {
	case '"':
		var s string
		return json.Unmarshal(body, &s) == nil && s == header
	case 't', 'f':
		return header == string(body)
	default:
		a, ok1 := new(big.Float).SetString(header)
		b, ok2 := new(big.Float).SetString(string(body))
		return ok1 && ok2 && a.Cmp(b) == 0
	}
}
