package pool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPool_BoundedReuseDiscard(t *testing.T) {
	var created, destroyed atomic.Int32
	p := New(2, func(context.Context) (*int, error) {
		n := int(created.Add(1))
		return &n, nil
	}, func(*int) { destroyed.Add(1) })
	ctx := context.Background()
	a, err := p.Get(ctx)
	require.NoError(t, err)
	b, err := p.Get(ctx)
	require.NoError(t, err)
	require.NotSame(t, a, b)

	wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = p.Get(wctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "no third instance")

	p.Put(a)
	c, err := p.Get(ctx)
	require.NoError(t, err)
	require.Same(t, a, c, "a healthy instance is reused")

	p.Discard(b)
	d, err := p.Get(ctx)
	require.NoError(t, err)
	require.NotSame(t, b, d, "a discarded instance is replaced")
	require.Equal(t, int32(3), created.Load())

	p.Put(c)
	p.Close()
	_, err = p.Get(ctx)
	require.ErrorIs(t, err, ErrClosed)
	p.Put(d) // destroyed, not kept
	require.Equal(t, int32(3), destroyed.Load())
}

func TestPool_CreateFailureFreesSlot(t *testing.T) {
	fail := errors.New("boom")
	p := New(1, func(context.Context) (int, error) { return 0, fail }, func(int) {})
	for i := 0; i < 3; i++ {
		_, err := p.Get(context.Background())
		require.ErrorIs(t, err, fail)
	}
}

func TestPool_Concurrent(t *testing.T) {
	var live, maxLive atomic.Int32
	p := New(3, func(context.Context) (*int, error) { return new(int), nil }, func(*int) {})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				v, err := p.Get(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				n := live.Add(1)
				for {
					m := maxLive.Load()
					if n <= m || maxLive.CompareAndSwap(m, n) {
						break
					}
				}
				*v++
				live.Add(-1)
				if i%10 == 0 {
					p.Discard(v)
				} else {
					p.Put(v)
				}
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, maxLive.Load(), int32(3))
}

func TestPool_Stats(t *testing.T) {
	p := New(3, func(context.Context) (*int, error) { return new(int), nil }, func(*int) {})
	ctx := context.Background()
	live, idle, size := p.Stats()
	require.Equal(t, [3]int{0, 0, 3}, [3]int{live, idle, size}, "instances are created lazily")
	a, err := p.Get(ctx)
	require.NoError(t, err)
	b, err := p.Get(ctx)
	require.NoError(t, err)
	live, idle, _ = p.Stats()
	require.Equal(t, [2]int{2, 0}, [2]int{live, idle}, "two in use")
	p.Put(a)
	live, idle, _ = p.Stats()
	require.Equal(t, [2]int{2, 1}, [2]int{live, idle}, "one back, idle")
	p.Discard(b)
	live, idle, _ = p.Stats()
	require.Equal(t, [2]int{1, 1}, [2]int{live, idle}, "a discarded instance frees its slot")
}

func TestPool_TryGetTryCreate(t *testing.T) {
	var created atomic.Int32
	p := New(2, func(context.Context) (*int, error) {
		n := int(created.Add(1))
		return &n, nil
	}, func(*int) {})
	ctx := context.Background()
	_, ok := p.TryGet()
	require.False(t, ok, "nothing idle yet")
	a, ok, err := p.TryCreate(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	b, ok, err := p.TryCreate(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	_, ok, err = p.TryCreate(ctx)
	require.NoError(t, err)
	require.False(t, ok, "full: two exist")
	p.Put(a)
	got, ok := p.TryGet()
	require.True(t, ok)
	require.Same(t, a, got)
	p.Discard(b)
	c, ok, err := p.TryCreate(ctx)
	require.NoError(t, err)
	require.True(t, ok, "a discarded instance frees its slot")
	require.EqualValues(t, 3, *c)

	failing := New(1, func(context.Context) (*int, error) { return nil, errors.New("boom") }, func(*int) {})
	_, ok, err = failing.TryCreate(ctx)
	require.Error(t, err)
	require.False(t, ok)
	_, ok, err = failing.TryCreate(ctx)
	require.Error(t, err, "a failed creation gives its slot back")
	require.False(t, ok)
	p.Close()
	_, ok, err = p.TryCreate(ctx)
	require.NoError(t, err)
	require.False(t, ok)
}
