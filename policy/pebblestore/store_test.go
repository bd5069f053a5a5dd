package pebblestore

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/storetest"
)

var ctx = context.Background()

func harness() storetest.Harness {
	return storetest.Harness{
		New: func(t *testing.T, avail policy.Availability) policy.Store {
			s, err := Open(t.TempDir(), Options{Availability: avail})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		},
		RewriteSnapshot: func(t *testing.T, s policy.Store, policyID uuid.UUID, version string, edit func([]byte) []byte) {
			ps := s.(*Store)
			key := snapshotKey(policyID, version)
			old, err := get(ps.db, key)
			require.NoError(t, err)
			require.NoError(t, ps.db.Set(key, edit(old), pebble.Sync))
		},
	}
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, harness())
}

// The same suite on a DB shared with another store's keys.
func TestStore_Conformance_SharedDB(t *testing.T) {
	h := harness()
	h.New = func(t *testing.T, avail policy.Availability) policy.Store {
		db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
		require.NoError(t, err)
		// Another store's keys on both sides of ours.
		for _, k := range []string{"e/chain/1", "o", "p", "q/x", "p0"} {
			require.NoError(t, db.Set([]byte(k), []byte("other"), pebble.Sync))
		}
		s, err := New(db, Options{Availability: avail})
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, s.Close())
			for _, k := range []string{"e/chain/1", "o", "p", "q/x", "p0"} {
				v, err := get(db, []byte(k))
				require.NoError(t, err, "another store's key %q survives", k)
				require.Equal(t, "other", string(v))
			}
			require.NoError(t, db.Close(), "Close left the shared DB open")
		})
		return s
	}
	storetest.Run(t, h)
}

type history struct {
	snapshots []governance.PolicySnapshot
	role      governance.PolicySnapshot
	global    governance.PolicySnapshot
}

// write puts five versions of two policies, activates some, binds some.
func write(t *testing.T, s policy.Store) history {
	var h history
	for _, id := range []uuid.UUID{uuid.New(), uuid.New()} {
		for v := 1; v <= 5; v++ {
			g := storetest.Gate("g", v)
			g.Transform = v%2 == 0
			snap := storetest.Snapshot(t, id, "v"+string(rune('0'+v)), g, storetest.Gate("h", 100))
			require.NoError(t, s.Put(ctx, snap))
			if v >= 3 {
				var err error
				snap, err = s.Activate(ctx, id, snap.Version(), &governance.ActorRef{Kind: "user", ID: "ops"}, storetest.T0.Add(time.Duration(v)*time.Minute))
				require.NoError(t, err)
			}
			h.snapshots = append(h.snapshots, snap)
		}
	}
	h.global, h.role = h.snapshots[2], h.snapshots[9]
	require.NoError(t, s.Bind(ctx, storetest.Binding(t, governance.ScopeGlobal, "", h.global.PolicyID(), h.global.Version())))
	require.NoError(t, s.Bind(ctx, storetest.Binding(t, governance.ScopeRole, "dev", h.role.PolicyID(), h.role.Version())))
	return h
}

func check(t *testing.T, s policy.Store, h history) {
	for _, want := range h.snapshots {
		got, err := s.Get(ctx, want.PolicyID(), want.Version())
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Equal(t, want.Digest(), got.Digest())
	}
	got, err := s.Resolve(ctx, "dev", "")
	require.NoError(t, err)
	require.Equal(t, h.role, got)
	got, err = s.Resolve(ctx, "ops", "repo")
	require.NoError(t, err)
	require.Equal(t, h.global, got)
}

func TestStore_Restart_HistoryIntact(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{Availability: storetest.Availability})
	require.NoError(t, err)
	h := write(t, s)
	check(t, s, h)
	require.NoError(t, s.Close())

	for i := 0; i < 2; i++ {
		s, err = Open(dir, Options{Availability: storetest.Availability})
		require.NoError(t, err)
		check(t, s, h)
		// History is still enforced after restart: conflicts and re-puts.
		first := h.snapshots[0]
		err = s.Put(ctx, storetest.Snapshot(t, first.PolicyID(), first.Version()))
		require.ErrorAs(t, err, new(*governance.PolicyConflictError))
		require.NoError(t, s.Close())
	}
}

// Every call that returned survives a crash: writes are synced.
func TestStore_Crash_SyncedWritesSurvive(t *testing.T) {
	fs := vfs.NewCrashableMem()
	s, err := Open("db", Options{Availability: storetest.Availability, FS: fs})
	require.NoError(t, err)
	h := write(t, s)
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, s.Close())

	s, err = Open("db", Options{Availability: storetest.Availability, FS: crashed})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	check(t, s, h)
}

func TestStore_Open_LayoutVersion(t *testing.T) {
	fs := vfs.NewMem()
	db, err := pebble.Open("", &pebble.Options{FS: fs})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Set(formatKey, []byte("9"), pebble.Sync))
	_, err = New(db, Options{})
	require.ErrorIs(t, err, ErrLayout)
}

// A tampered binding record is refused by Resolve and Bind, never routed.
func TestStore_TamperedBinding(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Availability: storetest.Availability})
	require.NoError(t, err)
	defer s.Close()
	id := uuid.New()
	require.NoError(t, s.Put(ctx, storetest.Snapshot(t, id, "1", storetest.Gate("g", 0))))
	_, err = s.Activate(ctx, id, "1", nil, storetest.T0)
	require.NoError(t, err)
	b := storetest.Binding(t, governance.ScopeRole, "dev", id, "1")
	require.NoError(t, s.Bind(ctx, b))

	// Point the index entry at another selector's binding.
	other := b
	other.Selector = "ops"
	v, err := other.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, s.db.Set(labelKey(b), v, pebble.Sync))
	_, err = s.Resolve(ctx, "dev", "")
	var ie *policy.IntegrityError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "binding_id", ie.Field)

	require.NoError(t, s.db.Set(bindingKey(b.BindingID), []byte(`{"scope":"team"}`), pebble.Sync))
	require.ErrorIs(t, s.Bind(ctx, b), policy.ErrIntegrity)
}

// A stored staged snapshot edited to "active" is refused by Resolve once a
// binding points at it (only the digest-free release data was edited).
func TestStore_TamperedReleaseState(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Availability: storetest.Availability})
	require.NoError(t, err)
	defer s.Close()
	id := uuid.New()
	require.NoError(t, s.Put(ctx, storetest.Snapshot(t, id, "1", storetest.Gate("g", 0))))
	b := storetest.Binding(t, governance.ScopeGlobal, "", id, "1")
	v, err := b.MarshalJSON()
	require.NoError(t, err)
	require.NoError(t, s.db.Set(labelKey(b), v, pebble.Sync)) // a binding written around Bind
	_, err = s.Resolve(ctx, "", "")
	var ie *policy.IntegrityError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "release_state", ie.Field)
}
