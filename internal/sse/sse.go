// Package sse writes server-sent event streams: the one loop the API's
// event routes and the console share (flush each event, a comment line to
// keep idle proxies from closing the stream, a write deadline so a stuck
// reader cannot hold a goroutine forever).
package sse

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// KeepAlive is how often an idle stream gets a comment line.
const KeepAlive = 15 * time.Second

// writeBound bounds one write to the reader.
const writeBound = 30 * time.Second

// Stream answers 200 text/event-stream and writes one event for each
// value of events until the channel closes, ctx ends, stop ends or the
// reader is gone. encode names the event and gives its data (one line of
// JSON); ok false skips the value.
func Stream[T any](ctx, stop context.Context, w http.ResponseWriter, events <-chan T, encode func(T) (event string, data []byte, ok bool)) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	tick := time.NewTicker(KeepAlive)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-stop.Done():
			return
		case <-tick.C:
			_ = rc.SetWriteDeadline(time.Now().Add(writeBound))
			_, err = io.WriteString(w, ": keep-alive\n\n")
		case v, open := <-events:
			if !open {
				return
			}
			name, data, ok := encode(v)
			if !ok {
				continue
			}
			_ = rc.SetWriteDeadline(time.Now().Add(writeBound))
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return // the reader is gone
		}
	}
}
