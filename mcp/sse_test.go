package mcp

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSSEReader_KeepsBytes(t *testing.T) {
	stream := ": keep-alive\n\nid: 7\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nretry: 10\n\ndata\n\ndata: tail"
	r := newSSEReader(strings.NewReader(stream))
	var raw strings.Builder
	var datas []string
	for {
		ev, err := r.next()
		raw.Write(ev.raw)
		if ev.hasData {
			datas = append(datas, string(ev.data))
		}
		if err != nil {
			require.True(t, errors.Is(err, io.EOF))
			break
		}
	}
	require.Equal(t, stream, raw.String(), "every byte passes unchanged")
	require.Equal(t, []string{"{\"a\":\n1}", "", "tail"}, datas)
}

func TestSSEEvent_WithData(t *testing.T) {
	r := newSSEReader(strings.NewReader("id: 3\nevent: message\ndata: {\"old\":1}\n\n"))
	ev, err := r.next()
	require.NoError(t, err)
	require.Equal(t, "id: 3\nevent: message\ndata: {\"new\":2}\n\n", string(ev.withData([]byte(`{"new":2}`))))
}
