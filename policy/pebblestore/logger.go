package pebblestore

import (
	"context"
	"fmt"
	"log/slog"
)

// pebbleLogger routes the messages of a Pebble database that Open owns to
// Options.Logger.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.LogAttrs(context.Background(), slog.LevelInfo, fmt.Sprintf(format, args...), slog.String("component", "pebble"))
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.LogAttrs(context.Background(), slog.LevelError, fmt.Sprintf(format, args...), slog.String("component", "pebble"))
}

// Fatalf never returns (Pebble relies on that). It logs, then panics with
// the message rather than exiting the process from a background goroutine
// (Pebble's default calls os.Exit), so the stack trace shows where.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.LogAttrs(context.Background(), slog.LevelError, msg, slog.String("component", "pebble"))
	panic("pebblestore: fatal Pebble error: " + msg)
}
