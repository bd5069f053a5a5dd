package policy_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

func snapshotWithModules(t *testing.T, modules ...string) governance.PolicySnapshot {
	t.Helper()
	var specs []governance.ExecutableGateBinding
	for i, m := range modules {
		b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
			GateID: "g" + string(rune('a'+i)), AdapterID: "wasm", Level: governance.LevelHard, Order: i,
			ToolIDs: []string{"bash"}, ModuleDigest: governance.SHA256Hex([]byte(m)),
		})
		require.NoError(t, err)
		specs = append(specs, b)
	}
	s, err := governance.NewPolicySnapshot(uuid.New(), "2026.12.1", specs)
	require.NoError(t, err)
	return s
}

// TestCheckActivation_AsksForModulesAtOnce: loading a module is the slow
// part of activation, so the distinct modules are asked for concurrently
// (each once): here every answer waits until all have been asked.
func TestCheckActivation_AsksForModulesAtOnce(t *testing.T) {
	s := snapshotWithModules(t, "one", "two", "three", "two")
	var (
		mu    sync.Mutex
		asked = map[string]int{}
		all   = make(chan struct{})
	)
	avail := policy.AvailabilityFuncs{
		Adapter: func(string) bool { return true },
		Module: func(digest string) bool {
			mu.Lock()
			asked[digest]++
			if len(asked) == 3 && asked[digest] == 1 {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
				return true
			case <-time.After(10 * time.Second):
				return false // asked one after another: fails the test below
			}
		},
	}
	require.NoError(t, policy.CheckActivation(s, avail))
	require.Len(t, asked, 3)
	for d, n := range asked {
		require.Equal(t, 1, n, "module %s asked once", d)
	}
}

// TestCheckActivation_FirstUnavailableInOrder: with modules checked at
// once, the refusal still names the first binding in evaluation order.
func TestCheckActivation_FirstUnavailableInOrder(t *testing.T) {
	s := snapshotWithModules(t, "ok", "missing-1", "missing-2")
	avail := policy.AvailabilityFuncs{
		Adapter: func(string) bool { return true },
		Module:  func(d string) bool { return d == governance.SHA256Hex([]byte("ok")) },
	}
	for range 20 {
		err := policy.CheckActivation(s, avail)
		var ae *policy.ActivationError
		require.True(t, errors.As(err, &ae), "%v", err)
		require.Equal(t, "gate_bindings[1].module_digest", ae.Field)
	}
}
