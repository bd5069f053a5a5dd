package host_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// hostileCase is one misbehaving module and where its failure must show.
type hostileCase struct {
	name    string // test name
	fixture string
	config  string
	tool    string // input tool (selects the misbehaviour of hostile_go.wasm)
	at      string // "load", "gate" or "evaluate"
	code    string
}

var hostileCases = []hostileCase{
	{"loop", "loop.wasm", "", "x", "evaluate", host.CodeTimeout},
	{"loop in _initialize", "loop_init.wasm", "", "x", "gate", host.CodeTimeout},
	{"memory bomb", "membomb.wasm", "", "x", "evaluate", host.CodeMemoryLimit},
	{"trap", "trap.wasm", "", "x", "evaluate", host.CodeTrap},
	{"proc_exit", "exit.wasm", "", "x", "evaluate", host.CodeTrap},
	{"garbage output", "garbage.wasm", "", "x", "evaluate", host.CodeBadOutput},
	{"output out of bounds", "out_of_bounds.wasm", "", "x", "evaluate", host.CodeBadOutput},
	{"huge output", "huge.wasm", "", "x", "evaluate", host.CodeOutputTooLarge},
	{"bad decision", "bad_decision.wasm", "", "x", "evaluate", host.CodeBadDecision},
	{"bad reason code", "bad_reason.wasm", "", "x", "evaluate", host.CodeBadOutput},
	{"bad alloc", "bad_alloc.wasm", "", "x", "evaluate", host.CodeAlloc},
	{"wrong ABI version", "wrong_version.wasm", "", "x", "gate", host.CodeABIVersion},
	{"missing export", "missing_export.wasm", "", "x", "load", host.CodeMissingExport},
	{"wrong signature", "wrong_signature.wasm", "", "x", "load", host.CodeMissingExport},
	{"unknown import", "bad_import.wasm", "", "x", "load", host.CodeBadImport},
	{"memory minimum past the cap", "big_memory.wasm", "", "x", "load", host.CodeMemoryLimit},
	{"config refused", "config_reject.wasm", `{"a":1}`, "x", "gate", host.CodeConfigRejected},
	{"config without gate_configure", "allow.wasm", `{"a":1}`, "x", "gate", host.CodeMissingExport},
	{"go: panic", "hostile_go.wasm", "", "panic", "evaluate", host.CodeTrap},
	{"go: memory bomb", "hostile_go.wasm", "", "membomb", "evaluate", host.CodeMemoryLimit},
	{"go: loop", "hostile_go.wasm", "", "loop", "evaluate", host.CodeTimeout},
}

// TestGate_Hostile: every hostile fixture is denied with its reason code, no
// guest text, quickly; the failed instance is replaced; and a normal call on
// the same host succeeds right after.
func TestGate_Hostile(t *testing.T) {
	h := sharedHost(t)
	healthy := gate(t, h, "toolgate.wasm", `{"deny_tools":["web_fetch"]}`)
	ctx := context.Background()
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			hh := h
			if c.code == host.CodeTimeout {
				hh = strictHost(t)
			}
			err := hostileError(t, hh, c)
			var ge *host.GuestError
			require.ErrorAs(t, err, &ge)
			require.Equal(t, c.code, ge.Code)
			require.Equal(t, c.code, host.DenyFor(err).ReasonCode)
			require.Equal(t, abi.DecisionDeny, host.DenyFor(err).Decision)
			for _, leak := range []string{"GUEST", "secret_guest_function_name", "hostile panic"} {
				require.NotContains(t, err.Error(), leak, "guest text leaked into the error")
			}

			out, err := healthy.Evaluate(ctx, input("web_fetch"))
			require.NoError(t, err, "the host keeps serving")
			require.Equal(t, "toolgate.tool_denied", out.ReasonCode)
		})
	}
}

// hostileError runs c to the step where it must fail and returns the error.
// For evaluate failures it checks the deny verdict and that a second call
// (on a fresh instance) fails the same way.
func hostileError(t *testing.T, h *host.Host, c hostileCase) error {
	ctx := context.Background()
	start := time.Now()
	// The time is logged (`go test -v` shows it: well under a second each
	// on this machine). The bound below only catches a guest that is not
	// stopped at all; it is generous so a loaded CI machine cannot flake it.
	defer func() {
		elapsed := time.Since(start)
		t.Logf("contained in %v", elapsed)
		require.Less(t, elapsed, 15*time.Second, "a failing guest is stopped")
	}()
	m, err := h.Load(ctx, wasmfixtures.Bytes(c.fixture), host.AnyDigest)
	if c.at == "load" {
		require.Error(t, err)
		return err
	}
	require.NoError(t, err)
	start = time.Now() // compiling a Go-built module on a cold cache is not the guest's doing
	g, err := h.Gate(ctx, m, []byte(c.config))
	if c.at == "gate" {
		require.Error(t, err)
		return err
	}
	require.NoError(t, err)
	var first error
	for i := 0; i < 2; i++ {
		if i == 1 {
			start = time.Now()
		}
		out, err := g.Evaluate(ctx, input(c.tool))
		require.Error(t, err)
		require.Equal(t, abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: c.code}, out, "deny with the code and nothing else")
		if first == nil {
			first = err
		}
	}
	return first
}

// TestGate_Sandbox_Probe: a Go guest that tries to open files, list
// directories, read the environment, its arguments, the clock and the random
// source gets nothing real.
func TestGate_Sandbox_Probe(t *testing.T) {
	t.Setenv("HOME", "/root-secret-home")
	g := gate(t, sharedHost(t), "hostile_go.wasm", "")
	out, err := g.Evaluate(context.Background(), input("probe"))
	require.NoError(t, err)
	require.Equal(t, "probe.done", out.ReasonCode)
	var p struct {
		OpenErrors []string `json:"open_errors"`
		Opened     []string `json:"opened"`
		Environ    []string `json:"environ"`
		Home       string   `json:"home"`
		Args       []string `json:"args"`
		UnixNano   int64    `json:"unix_nano"`
		Random     string   `json:"random"`
		ReadDir    int      `json:"read_dir"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.Detail), &p))
	require.Empty(t, p.Opened, "no file or directory can be opened")
	require.Len(t, p.OpenErrors, 5)
	require.Zero(t, p.ReadDir)
	require.Empty(t, p.Environ)
	require.Empty(t, p.Home)
	require.Empty(t, p.Args)
	real := time.Now().UnixNano()
	require.Less(t, p.UnixNano, real-int64(365*24*time.Hour), "the clock is wazero's fake one, not the real time")

	// The random source is deterministic: a fresh gate (fresh instance) sees
	// the same bytes.
	g2 := gate(t, sharedHost(t), "hostile_go.wasm", `{}`)
	require.Same(t, g, g2, "empty config and {} are the same binding")

	// time.Sleep(1h) under the fake clock (1 ms per reading) spins through
	// millions of readings: the deadline stops it like any other loop.
	_, err = gate(t, strictHost(t), "hostile_go.wasm", "").Evaluate(context.Background(), input("sleep"))
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeTimeout, ge.Code)
}

func TestGate_Evaluate_CallerDeadline(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, testConfig().WithCallTimeout(0)) // only the caller bounds the call
	require.NoError(t, err)
	defer h.Close(ctx)
	g := gate(t, h, "loop.wasm", "")

	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	out, err := g.Evaluate(dctx, input("x"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Equal(t, host.CodeTimeout, out.ReasonCode)

	cctx, cancel2 := context.WithCancel(ctx)
	time.AfterFunc(30*time.Millisecond, cancel2)
	out, err = g.Evaluate(cctx, input("x"))
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, host.CodeCanceled, out.ReasonCode)
}

func TestGate_Evaluate_SmallOutputCap(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, testConfig().WithMaxOutputBytes(64).WithMemoryLimitPages(128))
	require.NoError(t, err)
	defer h.Close(ctx)
	g := gate(t, h, "toolgate.wasm", "")
	in := input("read")
	out, err := g.Evaluate(ctx, in)
	require.NoError(t, err, "a short answer fits")
	require.Equal(t, "toolgate.allowed", out.ReasonCode)

	g = gate(t, h, "toolgate.wasm", `{"deny_tools":["read"]}`)
	_, err = g.Evaluate(ctx, in)
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge, "the deny carries a detail and exceeds 64 bytes")
	require.Equal(t, host.CodeOutputTooLarge, ge.Code)
}

func TestGate_Evaluate_LargeInput(t *testing.T) {
	g := gate(t, sharedHost(t), "toolgate.wasm", "")
	in := input("read")
	in.Arguments = []byte(`{"content":"` + strings.Repeat("a", 256<<10) + `"}`)
	out, err := g.Evaluate(context.Background(), in)
	require.NoError(t, err, "a 256 KiB input is written through a bigger buffer")
	require.Equal(t, "toolgate.allowed", out.ReasonCode)
}

// TestGate_Evaluate_SpinningGuestDoesNotBlockGC: a guest spinning in native
// code must still let the Go runtime stop the world (the instrumented loop
// check visits Go now and then); otherwise a garbage collection anywhere
// in the process would wait for the guest, and its deadline timer with it.
func TestGate_Evaluate_SpinningGuestDoesNotBlockGC(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, testConfig().WithCallTimeout(time.Second))
	require.NoError(t, err)
	defer h.Close(ctx)
	g := gate(t, h, "loop.wasm", "")
	done := make(chan error, 1)
	go func() {
		_, err := g.Evaluate(ctx, input("x"))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // the guest is spinning now
	gcDone := make(chan struct{})
	go func() {
		runtime.GC()
		close(gcDone)
	}()
	select {
	case <-gcDone:
	case <-time.After(700 * time.Millisecond):
		t.Fatal("a garbage collection waited for a spinning guest")
	}
	var ge *host.GuestError
	require.ErrorAs(t, <-done, &ge)
	require.Equal(t, host.CodeTimeout, ge.Code)
}

// TestHost_Close_WaitsForCallsInFlight: closing a host while a guest spins
// waits for the call to end (its deadline) instead of releasing the module
// under it.
func TestHost_Close_WaitsForCallsInFlight(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, testConfig().WithCallTimeout(200*time.Millisecond))
	require.NoError(t, err)
	g := gate(t, h, "loop.wasm", "")
	done := make(chan error, 1)
	go func() {
		_, err := g.Evaluate(ctx, input("x"))
		done <- err
	}()
	time.Sleep(30 * time.Millisecond)
	require.NoError(t, h.Close(ctx)) // under -race, releasing the module under the guest is reported
	select {
	case err := <-done:
		require.ErrorIs(t, err, host.ErrClosed)
	case <-time.After(time.Second):
		t.Fatal("the call did not end")
	}
}
