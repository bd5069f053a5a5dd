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

func TestParamHeaders(t *testing.T) {
	schema := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"tenant":{"type":"integer","x-mcp-header":"Tenant"}}},
		"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}},
		"q":{"type":"string"}}}`
	got := paramHeaders([]byte(schema))
	require.Equal(t, map[string][]string{"region": {"region"}, "tenant": {"opts", "tenant"}}, got, "only chains of properties count")
	require.Nil(t, paramHeaders([]byte(`{"type":"object"}`)))
}

func TestCheckParamHeaders(t *testing.T) {
	declared := map[string][]string{"region": {"region"}, "tenant": {"opts", "tenant"}, "dry": {"dry"}}
	body := func(args string) Message {
		m, err := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":` + args + `}}`))
		require.NoError(t, err)
		return m
	}
	cases := []struct {
		name   string
		args   string
		header map[string]string
		ok     bool
	}{
		{"all match", `{"region":"us-west1","opts":{"tenant":42},"dry":true}`, map[string]string{"Mcp-Method": "tools/call", "Mcp-Param-Region": "us-west1", "Mcp-Param-Tenant": "42", "Mcp-Param-Dry": "true"}, true},
		{"integer compared as a number", `{"opts":{"tenant":42}}`, map[string]string{"Mcp-Param-Tenant": "42.0"}, true},
		{"base64 value", `{"region":"Hello, 世界"}`, map[string]string{"mcp-param-region": "=?base64?SGVsbG8sIOS4lueVjA==?="}, true},
		{"unknown param header is ignored", `{}`, map[string]string{"Mcp-Param-Other": "x"}, true},
		{"no metadata headers, none required", `{"region":"us"}`, nil, true},
		{"null argument, no header", `{"region":null}`, map[string]string{"Mcp-Method": "tools/call"}, true},
		{"value differs", `{"region":"us-west1"}`, map[string]string{"Mcp-Param-Region": "eu-west1"}, false},
		{"boolean differs", `{"dry":false}`, map[string]string{"Mcp-Param-Dry": "true"}, false},
		{"header without the argument", `{}`, map[string]string{"Mcp-Param-Region": "us"}, false},
		{"missing header with Mcp-Method", `{"region":"us"}`, map[string]string{"Mcp-Method": "tools/call"}, false},
		{"invalid characters", `{"region":"ü"}`, map[string]string{"Mcp-Param-Region": "ü"}, false},
		{"object argument", `{"region":{"a":1}}`, map[string]string{"Mcp-Param-Region": "x"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.header {
				h.Set(k, v)
			}
			err := checkParamHeaders(h, body(c.args), declared)
			if c.ok {
				require.NoError(t, err)
				return
			}
			var hm *headerMismatch
			require.True(t, errors.As(err, &hm), "want a header mismatch, got %v", err)
		})
	}
}
