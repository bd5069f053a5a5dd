package mcp

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckRequestHeaders(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_note","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	read := `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///a b"}}`
	list := `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	unicode := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"grüße"}}`
	response := `{"jsonrpc":"2.0","id":5,"result":{}}`
	cases := []struct {
		name   string
		body   string
		header map[string][]string
		ok     bool
	}{
		{"no headers (2025-11-25 clients)", call, nil, true},
		{"matching method and name", call, map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"read_note"}}, true},
		{"matching version", call, map[string][]string{"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"read_note"}}, true},
		{"version differs from _meta", call, map[string][]string{"Mcp-Protocol-Version": {"2025-11-25"}}, false},
		{"2026-07-28 without Mcp-Method", list, map[string][]string{"Mcp-Protocol-Version": {"2026-07-28"}}, false},
		{"older version without Mcp-Method", list, map[string][]string{"Mcp-Protocol-Version": {"2025-11-25"}}, true},
		{"method mismatch", call, map[string][]string{"Mcp-Method": {"tools/list"}}, false},
		{"method case differs", call, map[string][]string{"Mcp-Method": {"Tools/Call"}, "Mcp-Name": {"read_note"}}, false},
		{"name mismatch", call, map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"write_note"}}, false},
		{"name missing", call, map[string][]string{"Mcp-Method": {"tools/call"}}, false},
		{"name without method", call, map[string][]string{"Mcp-Name": {"read_note"}}, false},
		{"name on a method that names nothing", list, map[string][]string{"Mcp-Method": {"tools/list"}, "Mcp-Name": {"x"}}, false},
		{"uri of resources/read", read, map[string][]string{"Mcp-Method": {"resources/read"}, "Mcp-Name": {"file:///a b"}}, true},
		{"base64 name", unicode, map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?Z3LDvMOfZQ==?="}}, true},
		{"base64 name differs", unicode, map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?Z3JlZXQ=?="}}, false},
		{"bad base64", unicode, map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"=?base64?***?="}}, false},
		{"raw non-ASCII value", unicode, map[string][]string{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"grüße"}}, false},
		{"header twice", call, map[string][]string{"Mcp-Method": {"tools/call", "tools/call"}, "Mcp-Name": {"read_note"}}, false},
		{"method header on a response", response, map[string][]string{"Mcp-Method": {"tools/call"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg, err := Parse([]byte(c.body))
			require.NoError(t, err)
			h := http.Header{}
			for k, vs := range c.header {
				for _, v := range vs {
					h.Add(k, v)
				}
			}
			err = checkRequestHeaders(h, msg)
			if c.ok {
				require.NoError(t, err)
				return
			}
			var hm *headerMismatch
			require.True(t, errors.As(err, &hm), "want a header mismatch, got %v", err)
		})
	}
}
