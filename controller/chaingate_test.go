package controller_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
)

// chainGate records the chain of every call it gets through EvaluateChain.
type chainGate struct {
	mu     sync.Mutex
	chains []string
	plain  int
}

func (g *chainGate) Evaluate(context.Context, abi.GateInput) (abi.GateOutput, error) {
	g.mu.Lock()
	g.plain++
	g.mu.Unlock()
	return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "ok"}, nil
}

func (g *chainGate) EvaluateChain(_ context.Context, chain string, _ abi.GateInput) (abi.GateOutput, error) {
	g.mu.Lock()
	g.chains = append(g.chains, chain)
	g.mu.Unlock()
	return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "ok"}, nil
}

// TestInvoke_ChainGateGetsTheChain: a gate that keeps task chains apart is
// told the operation's chain id on every call (and never called without it).
func TestInvoke_ChainGateGetsTheChain(t *testing.T) {
	g := &chainGate{}
	e := newEnv(t, []binding{hard("g", g)})
	for i := 0; i < 2; i++ {
		_, err := e.m.Invoke(context.Background(), controller.Call{Tool: "bash", Arguments: json.RawMessage(`{}`)}, e.opctx("bash"))
		require.NoError(t, err)
	}
	require.Equal(t, []string{e.chain.String(), e.chain.String()}, g.chains)
	require.Zero(t, g.plain)
}
