package native

import (
	"context"
	"sync/atomic"
	"time"
)

// deadlineCtx bounds the calls of one instance without allocating a context
// and a timer per call. It wraps the caller's context (whose Done is nil)
// for the duration of a call; its timer is re-armed per call, and when it
// fires it closes done, which makes wazero stop the guest and release it
// safely at its next check (WithCloseOnContextDone).
//
// Why not close the module from the timer? wazero's Module.Close from
// another goroutine releases the guest's memory while the guest still runs
// (a data race); a done context is the safe way to interrupt a call.
//
// NB: once fired, a deadlineCtx stays done: the instance is dead and never
// called again.
type deadlineCtx struct {
	parent context.Context // the current call's context; set by the calling goroutine only
	done   chan struct{}
	fired  atomic.Bool
	timer  *time.Timer
}

func newDeadlineCtx() *deadlineCtx {
	c := &deadlineCtx{done: make(chan struct{})}
	c.timer = time.AfterFunc(time.Hour, func() {
		c.fired.Store(true)
		close(c.done)
	})
	c.timer.Stop()
	return c
}

// call runs f with c standing for parent, under timeout.
func (c *deadlineCtx) call(parent context.Context, timeout time.Duration, f func(context.Context) error) error {
	c.parent = parent
	c.timer.Reset(timeout)
	err := f(c)
	if !c.timer.Stop() {
		// Fired (or firing): the instance must not be used again.
		c.fired.Store(true)
	}
	c.parent = nil
	return err
}

// expired reports whether the deadline fired during a call.
func (c *deadlineCtx) expired() bool { return c.fired.Load() }

func (c *deadlineCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *deadlineCtx) Done() <-chan struct{}       { return c.done }
func (c *deadlineCtx) Err() error {
	if c.fired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}
func (c *deadlineCtx) Value(key any) any { return c.parent.Value(key) }
