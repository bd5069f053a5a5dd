package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

// outcome reduces an append error to what callers can tell apart.
func outcome(err error) string {
	var ce *governance.EvidenceConflictError
	var ie *governance.EvidenceIntegrityError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &ce):
		return "conflict:" + string(ce.Kind)
	case errors.As(err, &ie):
		return "integrity"
	case errors.Is(err, evidence.ErrBatchChains):
		return "batch-chains"
	}
	return "other:" + err.Error()
}

// TestStore_DifferentialAgainstMemStore runs one random sequence of good
// and bad appends against the reference MemStore and this store: every
// outcome, and in the end every chain, must be identical.
func TestStore_DifferentialAgainstMemStore(t *testing.T) {
	ctx := context.Background()
	mem := evidence.NewMemStore()
	disk, _ := openTest(t, Options{})
	rng := rand.New(rand.NewPCG(7, 11))
	chains := []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}
	heads := map[uuid.UUID][]governance.EvidenceRecord{}
	head := func(c uuid.UUID) governance.ChainHead {
		if rs := heads[c]; len(rs) > 0 {
			return rs[len(rs)-1].Head()
		}
		return governance.EmptyHead
	}
	seen := map[string]int{}
	for i := range 400 {
		c := chains[rng.IntN(len(chains))]
		var batch []governance.EvidenceRecord
		var kind string
		switch op := rng.IntN(10); {
		case op < 4:
			kind, batch = "next", []governance.EvidenceRecord{storetest.Next(t, head(c), c)}
		case op == 4 && len(heads[c]) > 1:
			kind, batch = "stale", []governance.EvidenceRecord{storetest.Next(t, heads[c][len(heads[c])-2].Head(), c)}
		case op == 5 && len(heads[c]) > 0:
			kind, batch = "replay", []governance.EvidenceRecord{heads[c][rng.IntN(len(heads[c]))]}
		case op == 6:
			a := storetest.Next(t, head(c), c)
			kind, batch = "pair", []governance.EvidenceRecord{a, storetest.Next(t, a.Head(), c)}
		case op == 7:
			a := storetest.Next(t, head(c), c)
			bad := storetest.Next(t, a.Head(), c)
			bad.PolicyVersion = "tampered"
			kind, batch = "pair-bad", []governance.EvidenceRecord{a, bad}
		case op == 8:
			other := chains[(rng.IntN(len(chains)-1)+1+indexOf(chains, c))%len(chains)]
			kind, batch = "pair-two-chains", []governance.EvidenceRecord{storetest.Next(t, head(c), c), storetest.Next(t, head(other), other)}
		default:
			// A new record reusing a stored id from any chain.
			var stored []governance.EvidenceRecord
			for _, rs := range heads {
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
		_, errMem := evidence.AppendAll(ctx, mem, batch)
		_, errDisk := evidence.AppendAll(ctx, disk, batch)
		require.Equal(t, outcome(errMem), outcome(errDisk), "op %d (%s)", i, kind)
		seen[outcome(errMem)]++
		if errMem == nil {
			heads[c] = append(heads[c], batch...)
		}
	}
	for _, o := range []string{"ok", "integrity", "batch-chains", "conflict:wrong_sequence", "conflict:duplicate_record_id"} {
		require.NotZero(t, seen[o], "the sequence exercised %s: %v", o, seen)
	}
	for _, c := range chains {
		for _, s := range []evidence.Store{mem, disk} {
			h, err := s.Head(ctx, c)
			require.NoError(t, err)
			require.Equal(t, head(c), h, "%T chain %s", s, c)
			got, err := s.Read(ctx, c, -1)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprint(heads[c]), fmt.Sprint(got))
			res, err := s.Verify(ctx, c, h.Hash)
			require.NoError(t, err)
			require.Equal(t, len(heads[c]) > 0, res.Valid)
		}
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
