package pebblestore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// pebbleLogger routes Pebble's messages to Options.Logger and turns its
// Fatalf into a visible, documented stop.
//
// Why not Pebble's default? Its Fatalf calls os.Exit(1) from whatever
// goroutine hit the error: a host process would vanish with one line on
// stderr and no chance to flush its own logs. Here the message goes to the
// host's logger at Error, the store is fenced (no later Append is
// acknowledged), OnFatal runs, and then the goroutine panics with a
// *FatalError, which stops the process with the message and a stack trace.
type pebbleLogger struct {
	dir     string
	log     *slog.Logger
	onFatal func(*FatalError)
	fence   func(error)
	once    sync.Once
}

func (l *pebbleLogger) Infof(format string, args ...any) {
	l.log.LogAttrs(context.Background(), slog.LevelDebug, fmt.Sprintf(format, args...), slog.String("component", "pebble"), slog.String("dir", l.dir))
}

func (l *pebbleLogger) Errorf(format string, args ...any) {
	l.log.LogAttrs(context.Background(), slog.LevelError, fmt.Sprintf(format, args...), slog.String("component", "pebble"), slog.String("dir", l.dir))
}

// Fatalf never returns (Pebble's callers rely on that: some continue with
// inconsistent state otherwise).
func (l *pebbleLogger) Fatalf(format string, args ...any) {
	fe := &FatalError{Dir: l.dir, Message: fmt.Sprintf(format, args...)}
	l.log.LogAttrs(context.Background(), slog.LevelError, fe.Error(), slog.String("component", "pebble"), slog.String("dir", l.dir))
	if l.fence != nil {
		l.fence(fe)
	}
	if l.onFatal != nil {
		l.once.Do(func() { l.onFatal(fe) })
	}
	panic(fe)
}
