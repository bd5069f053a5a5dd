package native

import (
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/api"
)

const (
	reasonNone int32 = iota
	reasonDeadline
	reasonCanceled
)

// interrupter stops a running call of an instrumented module by setting its
// interrupt flag (see host/internal/interrupt). The flag is never cleared:
// an interrupted instance is dead.
type interrupter struct {
	flag   api.MutableGlobal
	reason atomic.Int32
	timer  *time.Timer // the host's per-call timeout, re-armed per call
}

func newInterrupter(flag api.MutableGlobal) *interrupter {
	in := &interrupter{flag: flag}
	in.timer = time.AfterFunc(time.Hour, func() { in.interrupt(reasonDeadline) })
	in.timer.Stop()
	return in
}

// interrupt records why and raises the flag; the guest traps at its next
// loop header. Safe to call from any goroutine.
func (in *interrupter) interrupt(reason int32) {
	if in.reason.CompareAndSwap(reasonNone, reason) {
		// NB: a plain store into the instance's globals, read by the guest's
		// native code; nothing in Go reads it concurrently.
		in.flag.Set(1)
	}
}
