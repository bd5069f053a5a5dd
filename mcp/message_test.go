package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/mcp"
)

func TestParse_Kinds(t *testing.T) {
	cases := []struct {
		line string
		kind mcp.Kind
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, mcp.KindRequest, "1"},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, mcp.KindNotification, ""},
		{`{"jsonrpc":"2.0","id":"x","result":{}}`, mcp.KindResponse, `"x"`},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`, mcp.KindResponse, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, mcp.KindBatch, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, mcp.KindInvalid, "null"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, mcp.KindInvalid, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, mcp.KindInvalid, "1"},
		{`{"jsonrpc":"2.0","id":true,"method":"x"}`, mcp.KindInvalid, ""},
		{`{"id":1,"method":"x"}`, mcp.KindInvalid, "1"},
		{`"str"`, mcp.KindInvalid, ""},
		{`[]`, mcp.KindInvalid, ""},
	}
	for _, c := range cases {
		m, err := mcp.Parse([]byte(c.line))
		require.NoError(t, err, c.line)
		require.Equal(t, c.kind, m.Kind, c.line)
		require.Equal(t, c.id, string(m.ID), c.line)
	}
	for _, bad := range []string{``, `{`, `{"a":1}x`, "\xff", `{"jsonrpc":"2.0","id":1,"method":"x"} {}`} {
		_, err := mcp.Parse([]byte(bad))
		require.ErrorIs(t, err, mcp.ErrParse, "%q", bad)
	}
}

// FuzzParse: no input crashes the envelope reader, and a message it calls
// a request really is a JSON-RPC 2.0 request.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{"isError":true}}`, `{`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := mcp.Parse(b)
		if err != nil || m.Kind != mcp.KindRequest {
			return
		}
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  *string         `json:"method"`
		}
		require.NoError(t, json.Unmarshal(b, &env))
		require.Equal(t, "2.0", env.JSONRPC)
		require.NotNil(t, env.Method)
		require.NotEqual(t, "null", string(env.ID))
	})
}
