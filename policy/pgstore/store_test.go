package pgstore

import (
	"context"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/internal/pgtest"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/storetest"
)

var ctx = context.Background()

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t testing.TB, avail policy.Availability) *Store {
	t.Helper()
	s, err := Open(ctx, pgtest.Schema(t), Options{Availability: avail})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func harness() storetest.Harness {
	return storetest.Harness{
		New: func(t *testing.T, avail policy.Availability) policy.Store { return open(t, avail) },
		RewriteSnapshot: func(t *testing.T, s policy.Store, policyID uuid.UUID, version string, edit func([]byte) []byte) {
			ps := s.(*Store)
			var raw []byte
			require.NoError(t, ps.pool.QueryRow(ctx, `SELECT snapshot FROM policy_snapshots WHERE policy_id = $1 AND version = $2`, policyID, version).Scan(&raw))
			_, err := ps.pool.Exec(ctx, `UPDATE policy_snapshots SET snapshot = $3 WHERE policy_id = $1 AND version = $2`, policyID, version, string(edit(raw)))
			require.NoError(t, err)
		},
	}
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, harness())
}
