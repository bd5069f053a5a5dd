package pgstore

import (
	"context"
	"os"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgtest"
)

var ctx = context.Background()

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open returns a store on a fresh schema of the shared server.
func open(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(ctx, pgtest.Schema(t), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func harness() storetest.Harness {
	return storetest.Harness{
		New: func(t *testing.T) evidence.Store { return open(t, Options{}) },
		Rewrite: func(t *testing.T, s evidence.Store, chain uuid.UUID, seq int64, mutate func(*governance.EvidenceRecord)) {
			ps := s.(*Store)
			recs, err := ps.Read(ctx, chain, seq-1)
			require.NoError(t, err)
			r := recs[0]
			mutate(&r)
			v, err := r.MarshalJSON()
			require.NoError(t, err)
			tag, err := ps.pool.Exec(ctx, `UPDATE evidence_records SET record = $3 WHERE chain_id = $1 AND sequence = $2`, chain, seq, string(v))
			require.NoError(t, err)
			require.EqualValues(t, 1, tag.RowsAffected())
		},
		Delete: func(t *testing.T, s evidence.Store, chain uuid.UUID, seq int64) {
			tag, err := s.(*Store).pool.Exec(ctx, `DELETE FROM evidence_records WHERE chain_id = $1 AND sequence = $2`, chain, seq)
			require.NoError(t, err)
			require.EqualValues(t, 1, tag.RowsAffected())
		},
	}
}

func TestStore_Conformance(t *testing.T) {
	storetest.Run(t, harness())
}
