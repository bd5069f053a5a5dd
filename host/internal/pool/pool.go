// Package pool is a bounded pool of single-threaded guest instances. At most
// size instances exist at once; they are created lazily, reused while
// healthy and destroyed when discarded.
package pool

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
)

// ErrClosed is returned by Get after Close.
var ErrClosed = errors.New("pool: closed")

// Pool holds up to size instances of T. Get, Put and Discard may be called
// concurrently.
type Pool[T any] struct {
	idle    chan T
	slots   chan struct{} // one token per live (or being created) instance
	create  func(context.Context) (T, error)
	destroy func(T)
	closed  atomic.Bool
	done    chan struct{}
}

// New returns a pool of at most size instances made by create and released
// by destroy.
func New[T any](size int, create func(context.Context) (T, error), destroy func(T)) *Pool[T] {
	size = max(size, 1)
	return &Pool[T]{
		idle:    make(chan T, size),
		slots:   make(chan struct{}, size),
		create:  create,
		destroy: destroy,
		done:    make(chan struct{}),
	}
}

// fill creates an instance for the slot the caller just took, giving the
// slot back if creation fails.
func (p *Pool[T]) fill(ctx context.Context) (T, error) {
	v, err := p.create(ctx)
	if err != nil {
		<-p.slots
		var zero T
		return zero, err
	}
	return v, nil
}

// Get returns an idle instance, creates one when fewer than size exist, or
// waits for one to be returned until ctx is done.
func (p *Pool[T]) Get(ctx context.Context) (T, error) {
	var zero T
	if p.closed.Load() {
		return zero, ErrClosed
	}
	select {
	case v := <-p.idle:
		return v, nil
	default:
	}
	select {
	case v := <-p.idle:
		return v, nil
	case p.slots <- struct{}{}:
		return p.fill(ctx)
	default:
	}
	// All instances are busy. NB: yield a few times before blocking: an
	// instance is usually back within a call's time, and a blocked receiver
	// would get it by hand-off, waking one goroutine per call (a convoy).
	for i := 0; i < 4; i++ {
		runtime.Gosched()
		select {
		case v := <-p.idle:
			return v, nil
		default:
		}
	}
	select {
	case v := <-p.idle:
		return v, nil
	case p.slots <- struct{}{}:
		return p.fill(ctx)
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-p.done:
		return zero, ErrClosed
	}
}

// TryGet returns an idle instance, if there is one, without creating one
// or waiting.
func (p *Pool[T]) TryGet() (T, bool) {
	var zero T
	if p.closed.Load() {
		return zero, false
	}
	select {
	case v := <-p.idle:
		return v, true
	default:
		return zero, false
	}
}

// TryCreate creates an instance when fewer than size exist, without
// waiting; ok is false when the pool is full (or closed).
func (p *Pool[T]) TryCreate(ctx context.Context) (v T, ok bool, err error) {
	if p.closed.Load() {
		return v, false, nil
	}
	select {
	case p.slots <- struct{}{}:
		v, err = p.fill(ctx)
		return v, err == nil, err
	default:
		return v, false, nil
	}
}

// Put returns a healthy instance for reuse.
func (p *Pool[T]) Put(v T) {
	if p.closed.Load() {
		p.Discard(v)
		return
	}
	// NB: never blocks: at most size instances exist and idle holds size.
	p.idle <- v
}

// Discard destroys an instance that must not be reused and frees its slot.
func (p *Pool[T]) Discard(v T) {
	p.destroy(v)
	<-p.slots
}

// Stats returns the instances that exist (idle, in use or being created),
// the idle ones, and the bound. The figures are a snapshot: they may be
// stale by the time the caller reads them.
func (p *Pool[T]) Stats() (live, idle, size int) {
	return len(p.slots), len(p.idle), cap(p.slots)
}

// Close destroys the idle instances; instances in use are destroyed when
// they are put back. Get fails with ErrClosed afterwards.
func (p *Pool[T]) Close() {
	if p.closed.Swap(true) {
		return
	}
	close(p.done)
	for {
		select {
		case v := <-p.idle:
			p.Discard(v)
		default:
			return
		}
	}
}
