package host

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/internal/wasmfixtures"
)

// waitFor polls cond (the test's way to know a goroutine reached a point).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "condition never held")
		time.Sleep(time.Millisecond)
	}
}

// TestLoad_SameBytesShareOneCompileAndTheQueueIsBounded: with the one
// compile slot taken and a queue of one, a load waits in the queue; a second
// load of the same bytes waits for that load (it takes no place in the
// queue), a load of other bytes finds the queue full and is refused at once
// with ErrLoadBusy; once the slot frees, both loads of the same bytes get
// the one module.
func TestLoad_SameBytesShareOneCompileAndTheQueueIsBounded(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig().WithCompileLimits(1, 1))
	require.NoError(t, err)
	defer h.Close(ctx)

	h.slots <- struct{}{} // a compile in progress
	wasm := wasmfixtures.Bytes("allow.wasm")
	type result struct {
		m   *Module
		err error
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() { m, err := h.Load(ctx, wasm, AnyDigest); first <- result{m, err} }()
	waitFor(t, func() bool { return h.queued.Load() == 1 })
	go func() { m, err := h.Load(ctx, wasm, AnyDigest); second <- result{m, err} }()

	_, err = h.Load(ctx, wasmfixtures.Bytes("trap.wasm"), AnyDigest)
	require.ErrorIs(t, err, ErrLoadBusy)

	<-h.slots
	a, b := <-first, <-second
	require.NoError(t, a.err)
	require.NoError(t, b.err)
	require.Same(t, a.m, b.m)
	require.Zero(t, h.queued.Load())
}

// TestLoad_WaitingLoadLeavesWithItsCaller: a load waiting for a compile
// slot ends as soon as its caller's context does (gate.canceled), and a
// load of the same bytes that was waiting for it then loads the module
// itself.
func TestLoad_WaitingLoadLeavesWithItsCaller(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig().WithCompileLimits(1, 4))
	require.NoError(t, err)
	defer h.Close(ctx)

	h.slots <- struct{}{}
	wasm := wasmfixtures.Bytes("allow.wasm")
	leaving, leave := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() { _, err := h.Load(leaving, wasm, AnyDigest); left <- err }()
	waitFor(t, func() bool { return h.queued.Load() == 1 })
	stays := make(chan error, 1)
	go func() { _, err := h.Load(ctx, wasm, AnyDigest); stays <- err }()

	leave()
	err = <-left
	var ge *GuestError
	require.True(t, errors.As(err, &ge), "%v", err)
	require.Equal(t, CodeCanceled, ge.Code)

	<-h.slots
	require.NoError(t, <-stays)
}

// TestLoad_OverTheMemoryBudgetIsRefused: a module whose load would cost
// more than the budget is refused before compiling, with its stable code;
// under the default budget the same module loads.
func TestLoad_OverTheMemoryBudgetIsRefused(t *testing.T) {
	ctx := context.Background()
	wasm := wasmfixtures.BigDataGate(8<<20, 1)
	h, err := New(ctx, NewConfig().WithLoadMemoryBudget(16<<20))
	require.NoError(t, err)
	defer h.Close(ctx)
	_, err = h.Load(ctx, wasm, AnyDigest)
	var ge *GuestError
	require.True(t, errors.As(err, &ge), "%v", err)
	require.Equal(t, CodeLoadMemory, ge.Code)

	roomy, err := New(ctx, NewConfig())
	require.NoError(t, err)
	defer roomy.Close(ctx)
	_, err = roomy.Load(ctx, wasm, AnyDigest)
	require.NoError(t, err)
}

// TestLoadTrusted_TakesNoCompileSlot: with every compile slot taken and
// the queue full, a load from outside is refused with ErrLoadBusy while
// LoadTrusted of the program's own module loads at once, taking no slot:
// the built-ins of a policy load side by side, whatever order their loads
// come in.
func TestLoadTrusted_TakesNoCompileSlot(t *testing.T) {
	ctx := context.Background()
	h, err := New(ctx, NewConfig().WithCompileLimits(1, 0))
	require.NoError(t, err)
	defer h.Close(ctx)

	h.slots <- struct{}{} // a compile in progress, for as long as the test runs
	defer func() { <-h.slots }()
	_, err = h.Load(ctx, wasmfixtures.Bytes("trap.wasm"), AnyDigest)
	require.ErrorIs(t, err, ErrLoadBusy)

	wasm := wasmfixtures.Bytes("allow.wasm")
	bounded, cancel := context.WithTimeout(ctx, 20*time.Second) // NB: a load waiting for the slot would wait for ever
	defer cancel()
	m, err := h.LoadTrusted(bounded, wasm, sha256Hex(wasm))
	require.NoError(t, err)
	require.Equal(t, sha256Hex(wasm), m.Digest())
	require.Len(t, h.slots, 1, "the trusted load took or left a slot")
	require.Zero(t, h.queued.Load())
}
