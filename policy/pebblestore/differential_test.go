package pebblestore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/storetest"
)

// TestStore_Differential runs random operation sequences against the memory
// store and the Pebble store (reopened midway) and requires identical
// answers: same values, same error text, same final state.
func TestStore_Differential(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runDifferential(t, uint64(seed)) })
	}
}

func runDifferential(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x90f))
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	versions := []string{"1", "2", "3"}
	labels := []struct {
		scope    governance.PolicyScope
		selector string
	}{
		{governance.ScopeGlobal, ""}, {governance.ScopeRole, "dev"}, {governance.ScopeRole, "ops"},
		{governance.ScopeResource, "repo/a"}, {governance.ScopeResource, "repo/b"},
		{governance.ScopeRole, ""}, // invalid: role without selector
	}
	bindingIDs := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	gate := func() governance.GateBindingSpec {
		g := storetest.Gate("g", rng.IntN(3))
		switch rng.IntN(6) {
		case 0:
			g.ModuleDigest = storetest.MissingModule
		case 1:
			g.Level = governance.LevelSoft
		case 2:
			g.ToolIDs = nil
		}
		return g
	}

	mem := policy.NewMemStore(storetest.Availability)
	dir := t.TempDir()
	disk, err := Open(dir, Options{Availability: storetest.Availability})
	require.NoError(t, err)
	defer func() { require.NoError(t, disk.Close()) }()

	errText := func(err error) string {
		if err == nil {
			return "<nil>"
		}
		return err.Error()
	}
	at := storetest.T0
	for step := 0; step < 200; step++ {
		if step == 100 {
			require.NoError(t, disk.Close())
			disk, err = Open(dir, Options{Availability: storetest.Availability})
			require.NoError(t, err)
		}
		id, version := ids[rng.IntN(len(ids))], versions[rng.IntN(len(versions))]
		at = at.Add(time.Duration(rng.IntN(1e6)) * time.Microsecond)
		var gotMem, gotDisk any
		switch op := rng.IntN(5); op {
		case 0: // Put
			var gates []governance.GateBindingSpec
			for n := rng.IntN(3); n > 0; n-- {
				g := gate()
				g.GateID = fmt.Sprintf("g%d", rng.IntN(3))
				gates = append(gates, g)
			}
			snap := storetest.Snapshot(t, id, version, gates...)
			gotMem, gotDisk = errText(mem.Put(ctx, snap)), errText(disk.Put(ctx, snap))
		case 1: // Get
			a, errA := mem.Get(ctx, id, version)
			b, errB := disk.Get(ctx, id, version)
			gotMem, gotDisk = []any{a, errText(errA)}, []any{b, errText(errB)}
		case 2: // Activate
			var actor *governance.ActorRef
			if rng.IntN(2) == 0 {
				actor = &governance.ActorRef{Kind: "user", ID: fmt.Sprint(step)}
			}
			a, errA := mem.Activate(ctx, id, version, actor, at)
			b, errB := disk.Activate(ctx, id, version, actor, at)
			gotMem, gotDisk = []any{a, errText(errA)}, []any{b, errText(errB)}
		case 3: // Bind
			l := labels[rng.IntN(len(labels))]
			b := governance.PolicyBinding{
				BindingID: bindingIDs[rng.IntN(len(bindingIDs))], Scope: l.scope, Selector: l.selector,
				PolicyID: id, PolicyVersion: version, CreatedAt: storetest.T0,
			}
			gotMem, gotDisk = errText(mem.Bind(ctx, b)), errText(disk.Bind(ctx, b))
		case 4: // Resolve
			role := []string{"", "dev", "ops"}[rng.IntN(3)]
			resource := []string{"", "repo/a", "repo/b"}[rng.IntN(3)]
			a, errA := mem.Resolve(ctx, role, resource)
			b, errB := disk.Resolve(ctx, role, resource)
			gotMem, gotDisk = []any{a, errText(errA)}, []any{b, errText(errB)}
		}
		require.Equal(t, gotMem, gotDisk, "step %d", step)
	}
	for _, id := range ids {
		for _, v := range versions {
			a, errA := mem.Get(ctx, id, v)
			b, errB := disk.Get(ctx, id, v)
			require.Equal(t, a, b)
			require.Equal(t, errText(errA), errText(errB))
		}
	}
}
