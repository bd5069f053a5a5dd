package mcp

import (
	"bufio"
	"bytes"
	"io"
)

// sseEvent is one Server-Sent Events event as it arrived: its lines
// (each with its line ending) up to and including the blank line that
// ends it, and the data they carry.
type sseEvent struct {
	raw  []byte
	data []byte // the data lines joined with "\n" (SSE's rule)
	// hasData: the event carried at least one data field (a comment or a
	// bare id/retry carries none).
	hasData bool
}

// sseReader splits an SSE stream into events without changing a byte of
// them: the relay writes raw through and reads data.
type sseReader struct {
	br *bufio.Reader
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReaderSize(r, 64*1024)} }

// next returns the next event; at the end of the stream it returns what
// was left (an unterminated event, possibly empty) with io.EOF.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data [][]byte
	for {
		line, err := s.br.ReadBytes('\n')
		ev.raw = append(ev.raw, line...)
		field := bytes.TrimRight(line, "\r\n")
		if len(line) > 0 && len(field) == 0 && err == nil {
			ev.data = bytes.Join(data, []byte("\n"))
			return ev, nil
		}
		if name, value, ok := bytes.Cut(field, []byte(":")); ok && string(name) == "data" {
			value = bytes.TrimPrefix(value, []byte(" "))
			data = append(data, value)
			ev.hasData = true
		} else if string(field) == "data" {
			data = append(data, nil)
			ev.hasData = true
		}
		if err != nil {
			ev.data = bytes.Join(data, []byte("\n"))
			return ev, err
		}
	}
}

// withData rewrites an event's data (the one message the relay changes:
// a tools/list answer under --hide-denied), keeping its other fields.
func (ev sseEvent) withData(data []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(ev.raw, []byte("\n")) {
		field := bytes.TrimRight(line, "\r\n")
		if len(field) == 0 {
			continue
		}
		if name, _, ok := bytes.Cut(field, []byte(":")); (ok && string(name) == "data") || string(field) == "data" {
			continue
		}
		out = append(append(out, field...), '\n')
	}
	out = append(out, "data: "...)
	out = append(out, data...)
	return append(out, "\n\n"...)
}
