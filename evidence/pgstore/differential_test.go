package pgstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// outcome reduces an append error to what a caller can tell apart.
func outcome(err error) string {
	var ce *governance.EvidenceConflictError
	var ie *governance.EvidenceIntegrityError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &ce):
		return "conflict:" + string(ce.Kind) + ":" + ce.RecordID
	case errors.As(err, &ie):
		return "integrity:" + ie.RecordID
	case errors.Is(err, evidence.ErrBatchChains):
		return "batch-chains"
	}
	return "other:" + err.Error()
}

// TestStore_DifferentialMemPebblePostgres runs the same random sequences of
// good and bad appends (single and batched) against MemStore, the Pebble
// store and this store: every outcome (kind and offending record) and, at
// the end, every chain's head, records and verification are identical.
func TestStore_DifferentialMemPebblePostgres(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runDifferential(t, seed) })
	}
}

func runDifferential(t *testing.T, seed uint64) {
	peb, err := pebblestore.Open(t.TempDir(), pebblestore.Options{BallastSize: -1})
	require.NoError(t, err)
	defer peb.Close()
	stores := []evidence.Store{evidence.NewMemStore(), peb, open(t, Options{})}

	rng := rand.New(rand.NewPCG(seed, 0xe71d))
	chains := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	accepted := map[uuid.UUID][]governance.EvidenceRecord{}
	head := func(c uuid.UUID) governance.ChainHead {
		if rs := accepted[c]; len(rs) > 0 {
			return rs[len(rs)-1].Head()
		}
		return governance.EmptyHead
	}
	seen := map[string]int{}
	for i := range 250 {
		c := chains[rng.IntN(len(chains))]
		var batch []governance.EvidenceRecord
		var kind string
		switch op := rng.IntN(12); {
		case op < 4:
			kind, batch = "next", []governance.EvidenceRecord{storetest.Next(t, head(c), c)}
		case op == 4 && len(accepted[c]) > 1:
			kind, batch = "stale", []governance.EvidenceRecord{storetest.Next(t, accepted[c][len(accepted[c])-2].Head(), c)}
		case op == 5 && len(accepted[c]) > 0:
			kind, batch = "replay", []governance.EvidenceRecord{accepted[c][rng.IntN(len(accepted[c]))]}
		case op == 6:
			a := storetest.Next(t, head(c), c)
			b := storetest.Next(t, a.Head(), c)
			kind, batch = "batch", []governance.EvidenceRecord{a, b, storetest.Next(t, b.Head(), c)}
		case op == 7:
			a := storetest.Next(t, head(c), c)
			bad := storetest.Next(t, a.Head(), c)
			bad.PolicyVersion = "tampered"
			kind, batch = "batch-bad", []governance.EvidenceRecord{a, bad}
		case op == 8:
			other := chains[(indexOf(chains, c)+1+rng.IntN(len(chains)-1))%len(chains)]
			kind, batch = "batch-two-chains", []governance.EvidenceRecord{storetest.Next(t, head(c), c), storetest.Next(t, head(other), other)}
		case op == 9:
			// A gap: the record after the next one.
			skip := storetest.Next(t, head(c), c)
			kind, batch = "gap", []governance.EvidenceRecord{storetest.Next(t, skip.Head(), c)}
		case op == 10 && len(accepted[c]) > 0:
			// A batch whose second record replays a stored one.
			a := storetest.Next(t, head(c), c)
			kind, batch = "batch-replay", []governance.EvidenceRecord{a, accepted[c][0]}
		default:
			var stored []governance.EvidenceRecord
			for _, rs := range accepted {
				stored = append(stored, rs...)
			}
			if len(stored) == 0 {
				continue
			}
			r, err := governance.NextRecord(head(c), governance.RecordSpec{
				RecordID: stored[rng.IntN(len(stored))].RecordID, Type: governance.GateEvaluated,
				ChainID: c, PolicyID: c, PolicyVersion: "1",
			})
			require.NoError(t, err)
			kind, batch = "dup-id", []governance.EvidenceRecord{r}
		}
		var want string
		for j, s := range stores {
			rcs, err := evidence.AppendAll(ctx, s, batch)
			got := outcome(err)
			if j == 0 {
				want = got
				continue
			}
			require.Equal(t, want, got, "seed %d op %d (%s) on %T", seed, i, kind, s)
			if err == nil {
				require.Len(t, rcs, len(batch))
			}
		}
		parts := strings.SplitN(want, ":", 3)
		seen[kind+"→"+strings.Join(parts[:min(len(parts), 2)], ":")]++
		if want == "ok" {
			accepted[c] = append(accepted[c], batch...)
		}
	}
	t.Logf("seed %d outcomes: %v", seed, seen)
	for _, c := range chains {
		for _, s := range stores {
			h, err := s.Head(ctx, c)
			require.NoError(t, err)
			require.Equal(t, head(c), h, "%T chain %s", s, c)
			got, err := s.Read(ctx, c, -1)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(accepted[c]), fmt.Sprint(got), "%T", s)
			res, err := s.Verify(ctx, c, h.Hash)
			require.NoError(t, err)
			require.Equal(t, len(accepted[c]) > 0, res.Valid, "%T %+v", s, res)
			require.Equal(t, int64(len(accepted[c])), res.CheckedRecords)
		}
	}
	for _, s := range stores {
		var all []uuid.UUID
		after := uuid.Nil
		for {
			page, err := s.(evidence.ChainLister).Chains(ctx, after, 2)
			require.NoError(t, err)
			all = append(all, page...)
			if len(page) < 2 {
				break
			}
			after = page[len(page)-1]
		}
		n := 0
		for _, c := range chains {
			if len(accepted[c]) > 0 {
				n++
			}
		}
		require.Len(t, all, n, "%T lists every chain once", s)
	}
}

func indexOf(ids []uuid.UUID, id uuid.UUID) int {
	for i, x := range ids {
		if x == id {
			return i
		}
	}
	return -1
}
