package host_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
)

func spyInput(token string) abi.GateInput {
	in := input("read")
	in.Arguments = []byte(`{"token":"` + token + `"}`)
	return in
}

// TestGate_Isolation_Spy: the spy fixture answers each call with the input
// its instance saw last. Under chain and call isolation no chain ever sees
// another chain's token (native and Extism, one instance or several,
// sequential or concurrent); under call isolation it sees nothing at all;
// the shared mode, for trusted modules only, is shown not to be isolated.
func TestGate_Isolation_Spy(t *testing.T) {
	ctx := context.Background()
	for _, size := range []int{1, 2} {
		h, err := host.New(ctx, testConfig().WithPoolSize(size))
		require.NoError(t, err)
		t.Cleanup(func() { h.Close(ctx) })
		for _, fixture := range []string{"spy.wasm", "extism_spy.wasm"} {
			m := load(t, h, fixture)
			for _, iso := range []host.Isolation{host.IsolationChain, host.IsolationCall, host.IsolationShared} {
				t.Run(fmt.Sprintf("pool=%d/%s/%s", size, fixture, iso), func(t *testing.T) {
					g, err := h.GateWith(ctx, m, nil, host.GateOptions{Isolation: iso, Binding: "spy"})
					require.NoError(t, err)
					require.Equal(t, iso, g.Isolation())
					call := func(chain string, i int) abi.GateOutput {
						out, err := g.EvaluateChain(ctx, chain, spyInput(fmt.Sprintf("SECRET-%s-%d", chain, i)))
						require.NoError(t, err)
						return out
					}
					leaks := 0
					check := func(chain string, out abi.GateOutput) {
						for _, other := range []string{"A", "B", "C", "D"} {
							if other != chain && strings.Contains(out.Message, "SECRET-"+other) {
								leaks++
							}
						}
						if iso == host.IsolationCall {
							require.Equal(t, "spy.fresh", out.ReasonCode, "call isolation: nothing of an earlier call")
							require.NotContains(t, out.Message, "SECRET")
						}
					}
					// Sequential: A then B on the same instance(s).
					check("A", call("A", 0))
					check("B", call("B", 0))
					check("A", call("A", 1))
					out, err := g.Evaluate(ctx, spyInput("none"))
					require.NoError(t, err)
					if strings.Contains(out.Message, "SECRET") {
						leaks++ // a call outside any chain saw a chain's input
					}
					// Concurrent: four chains interleaved.
					var wg sync.WaitGroup
					var mu sync.Mutex
					for _, chain := range []string{"A", "B", "C", "D"} {
						wg.Add(1)
						go func(chain string) {
							defer wg.Done()
							for i := 0; i < 8; i++ {
								out, err := g.EvaluateChain(ctx, chain, spyInput(fmt.Sprintf("SECRET-%s-%d", chain, i)))
								if err != nil {
									t.Error(err)
									return
								}
								mu.Lock()
								check(chain, out)
								mu.Unlock()
							}
						}(chain)
					}
					wg.Wait()
					if iso == host.IsolationShared {
						if size == 1 {
							require.Positive(t, leaks, "shared mode is NOT isolated: the spy sees other chains")
						}
						return
					}
					require.Zero(t, leaks, "a chain saw another chain's input")
				})
			}
		}
	}
}

// TestHost_Gate_BindingsNeverShare: two bindings of the same module and
// configuration get two gates (two pools); the same binding gets one.
func TestHost_Gate_BindingsNeverShare(t *testing.T) {
	h := sharedHost(t)
	m := load(t, h, "spy.wasm")
	ctx := context.Background()
	a, err := h.GateWith(ctx, m, nil, host.GateOptions{Binding: "tenant-a"})
	require.NoError(t, err)
	b, err := h.GateWith(ctx, m, nil, host.GateOptions{Binding: "tenant-b"})
	require.NoError(t, err)
	again, err := h.GateWith(ctx, m, nil, host.GateOptions{Binding: "tenant-a"})
	require.NoError(t, err)
	require.NotSame(t, a, b)
	require.Same(t, a, again)
	call, err := h.GateWith(ctx, m, nil, host.GateOptions{Binding: "tenant-a", Isolation: host.IsolationCall})
	require.NoError(t, err)
	require.NotSame(t, a, call, "the isolation mode is part of the key")

	_, err = a.EvaluateChain(ctx, "chain-1", spyInput("SECRET-A"))
	require.NoError(t, err)
	out, err := b.EvaluateChain(ctx, "chain-1", spyInput("SECRET-B"))
	require.NoError(t, err)
	require.NotContains(t, out.Message, "SECRET-A", "another binding's instance, even within one chain")

	_, err = h.GateWith(ctx, m, nil, host.GateOptions{Isolation: host.Isolation(9)})
	require.ErrorIs(t, err, host.ErrInvalidConfig)
}

// TestGate_ChainAffinity: under chain isolation a chain gets back the
// instance it dirtied last while the pool has room for one per chain (the
// spy sees the chain's own earlier input: no reset was paid), and never an
// instance another chain dirtied without a reset in between.
func TestGate_ChainAffinity(t *testing.T) {
	ctx := context.Background()
	for _, size := range []int{1, 2} {
		t.Run(fmt.Sprintf("pool=%d", size), func(t *testing.T) {
			h, err := host.New(ctx, testConfig().WithPoolSize(size))
			require.NoError(t, err)
			t.Cleanup(func() { h.Close(ctx) })
			g, err := h.GateWith(ctx, load(t, h, "spy.wasm"), nil, host.GateOptions{Binding: "spy"})
			require.NoError(t, err)
			call := func(chain string, i int) abi.GateOutput {
				out, err := g.EvaluateChain(ctx, chain, spyInput(fmt.Sprintf("SECRET-%s-%d", chain, i)))
				require.NoError(t, err)
				return out
			}
			require.Equal(t, "spy.fresh", call("A", 0).ReasonCode)
			require.Equal(t, "spy.fresh", call("B", 0).ReasonCode)
			for i := 1; i < 4; i++ {
				for _, chain := range []string{"A", "B"} {
					out := call(chain, i)
					other := map[string]string{"A": "B", "B": "A"}[chain]
					require.NotContains(t, out.Message, "SECRET-"+other, "a chain saw another chain's input")
					if size == 1 {
						require.Equal(t, "spy.fresh", out.ReasonCode, "one instance, two chains: a reset every switch")
						continue
					}
					require.Equal(t, "spy.reuse", out.ReasonCode, "its own instance back, not reset")
					require.Contains(t, out.Message, fmt.Sprintf("SECRET-%s-%d", chain, i-1))
				}
			}
			// A third chain finds the pool full: it gets an instance reset.
			out := call("C", 0)
			require.Equal(t, "spy.fresh", out.ReasonCode)
			require.NotContains(t, out.Message, "SECRET")
		})
	}
}
