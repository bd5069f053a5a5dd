package storetest

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// testList: List returns every version put, staged and active, ordered by
// policy id then version, each as Get returns it.
func testList(t *testing.T, h Harness) {
	s := newStore(t, h)
	lister, ok := s.(policy.Lister)
	require.True(t, ok, "%T does not implement policy.Lister", s)
	empty, err := lister.List(ctx)
	require.NoError(t, err)
	require.Empty(t, empty)

	a, b := uuid.New(), uuid.New()
	if a.String() > b.String() {
		a, b = b, a
	}
	require.NoError(t, s.Put(ctx, Snapshot(t, b, "1", Gate("g", 0))))
	require.NoError(t, s.Put(ctx, Snapshot(t, a, "2", Gate("g", 0))))
	require.NoError(t, s.Put(ctx, Snapshot(t, a, "1", Gate("g", 0))))
	_, err = s.Activate(ctx, a, "2", nil, T0)
	require.NoError(t, err)

	got, err := lister.List(ctx)
	require.NoError(t, err)
	require.Len(t, got, 3)
	type ref struct {
		id      uuid.UUID
		version string
		state   governance.PolicyReleaseState
	}
	refs := make([]ref, len(got))
	for i, snap := range got {
		refs[i] = ref{snap.PolicyID(), snap.Version(), snap.ReleaseState()}
		stored, err := s.Get(ctx, snap.PolicyID(), snap.Version())
		require.NoError(t, err)
		require.Equal(t, stored, snap)
	}
	require.Equal(t, []ref{{a, "1", governance.Staged}, {a, "2", governance.Active}, {b, "1", governance.Staged}}, refs)
}
