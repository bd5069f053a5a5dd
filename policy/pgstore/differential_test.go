package pgstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgtest"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/pebblestore"
	"github.com/govhost/govhost/policy/storetest"
)

// TestStore_DifferentialMemPebblePostgres runs random operation sequences
// against the memory, Pebble and PostgreSQL stores (the PostgreSQL one
// reopened midway, as a second server would see it) and requires
// identical answers: same values, same error text, same final state.
func TestStore_DifferentialMemPebblePostgres(t *testing.T) {
	for seed := uint64(0); seed < 4; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runDifferential(t, seed) })
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

	peb, err := pebblestore.Open(t.TempDir(), pebblestore.Options{Availability: storetest.Availability})
	require.NoError(t, err)
	defer peb.Close()
	dsn := pgtest.Schema(t)
	pg, err := Open(ctx, dsn, Options{Availability: storetest.Availability})
	require.NoError(t, err)
	defer func() { require.NoError(t, pg.Close()) }()
	stores := []policy.Store{policy.NewMemStore(storetest.Availability), peb, pg}

	errText := func(err error) string {
		if err == nil {
			return "<nil>"
		}
		return err.Error()
	}
	at := storetest.T0
	for step := 0; step < 150; step++ {
		if step == 75 {
			second, err := Open(ctx, dsn, Options{Availability: storetest.Availability})
			require.NoError(t, err)
			defer func() { require.NoError(t, second.Close()) }()
			stores[2] = second
		}
		id, version := ids[rng.IntN(len(ids))], versions[rng.IntN(len(versions))]
		at = at.Add(time.Duration(rng.IntN(1e6)) * time.Microsecond)
		var do func(s policy.Store) any
		switch op := rng.IntN(5); op {
		case 0:
			var gates []governance.GateBindingSpec
			for n := rng.IntN(3); n > 0; n-- {
				g := gate()
				g.GateID = fmt.Sprintf("g%d", rng.IntN(3))
				gates = append(gates, g)
			}
			snap := storetest.Snapshot(t, id, version, gates...)
			do = func(s policy.Store) any { return errText(s.Put(ctx, snap)) }
		case 1:
			do = func(s policy.Store) any { v, err := s.Get(ctx, id, version); return []any{v, errText(err)} }
		case 2:
			var actor *governance.ActorRef
			if rng.IntN(2) == 0 {
				actor = &governance.ActorRef{Kind: "user", ID: fmt.Sprint(step)}
			}
			do = func(s policy.Store) any {
				v, err := s.Activate(ctx, id, version, actor, at)
				return []any{v, errText(err)}
			}
		case 3:
			l := labels[rng.IntN(len(labels))]
			b := governance.PolicyBinding{
				BindingID: bindingIDs[rng.IntN(len(bindingIDs))], Scope: l.scope, Selector: l.selector,
				PolicyID: id, PolicyVersion: version, CreatedAt: storetest.T0,
			}
			do = func(s policy.Store) any { return errText(s.Bind(ctx, b)) }
		case 4:
			role := []string{"", "dev", "ops"}[rng.IntN(3)]
			resource := []string{"", "repo/a", "repo/b"}[rng.IntN(3)]
			do = func(s policy.Store) any { v, err := s.Resolve(ctx, role, resource); return []any{v, errText(err)} }
		}
		want := do(stores[0])
		for _, s := range stores[1:] {
			require.Equal(t, want, do(s), "seed %d step %d on %T", seed, step, s)
		}
	}
	for _, id := range ids {
		for _, v := range versions {
			a, errA := stores[0].Get(ctx, id, v)
			for _, s := range stores[1:] {
				b, errB := s.Get(ctx, id, v)
				require.Equal(t, a, b)
				require.Equal(t, errText(errA), errText(errB))
			}
		}
	}
}
