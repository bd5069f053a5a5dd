package evidence_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

func TestMemStore_Conformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) evidence.Store { return evidence.NewMemStore() },
		Rewrite: func(t *testing.T, s evidence.Store, chain uuid.UUID, seq int64, mutate func(*governance.EvidenceRecord)) {
			evidence.TamperMem(s.(*evidence.MemStore), chain, int(seq), mutate)
		},
		Delete: func(t *testing.T, s evidence.Store, chain uuid.UUID, seq int64) {
			evidence.RemoveMem(s.(*evidence.MemStore), chain, int(seq))
		},
	})
}

func TestMemStore_Chains(t *testing.T) {
	storetest.RunChainLister(t, storetest.Harness{New: func(t *testing.T) evidence.Store { return evidence.NewMemStore() }})
}

// A chain longer than one of the store's chunks reads, heads, verifies
// and refuses a replay like a short one, from every starting point.
func TestMemStore_ChainAcrossChunks(t *testing.T) {
	ctx := context.Background()
	s := evidence.NewMemStore()
	chain, recs := storetest.Fill(t, s, 150)
	for _, after := range []int64{-7, -1, 0, 62, 63, 64, 127, 128, 148, 149, 150, math.MaxInt64} {
		got, err := s.Read(ctx, chain, after)
		require.NoError(t, err)
		start := min(max(after, -1), int64(len(recs))-1) + 1
		want := recs[start:]
		require.Equal(t, append([]governance.EvidenceRecord{}, want...), got, "after %d", after)
	}
	head, err := s.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, recs[149].Head(), head)
	res, err := s.Verify(ctx, chain, recs[149].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid)
	require.Equal(t, int64(150), res.CheckedRecords)
	_, err = s.Append(ctx, recs[70])
	var ce *governance.EvidenceConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, governance.ConflictDuplicateRecordID, ce.Kind)
}

// CheckBatch finds a record id or a chain hash repeated inside a batch,
// in an operation's short batch and in a long one alike.
func TestCheckBatch_RepeatsInsideTheBatch(t *testing.T) {
	for _, n := range []int{3, 40} {
		chain := uuid.New()
		head := governance.EmptyHead
		var recs []governance.EvidenceRecord
		for range n {
			r := storetest.Next(t, head, chain)
			recs = append(recs, r)
			head = r.Head()
		}
		require.NoError(t, evidence.CheckBatch(governance.EmptyHead, recs))

		sameID := append([]governance.EvidenceRecord{}, recs...)
		sameID[n-1].RecordID = sameID[0].RecordID
		var ce *governance.EvidenceConflictError
		require.ErrorAs(t, evidence.CheckBatch(governance.EmptyHead, sameID), &ce)
		require.Equal(t, governance.ConflictDuplicateRecordID, ce.Kind, "batch of %d", n)

		sameHash := append([]governance.EvidenceRecord{}, recs...)
		sameHash[n-1].ChainHash = sameHash[1].ChainHash
		require.ErrorAs(t, evidence.CheckBatch(governance.EmptyHead, sameHash), &ce)
		require.Equal(t, governance.ConflictDuplicateHash, ce.Kind, "batch of %d", n)
	}
}

// A refused batch leaves nothing behind in the store's id index, whatever
// refused it, and each refusal names what a store that checks every id
// before the chain's position would name: an id the store holds first,
// then a repeat inside the batch, then the position.
func TestMemStore_RefusedBatchLeavesNoID(t *testing.T) {
	ctx := context.Background()
	s := evidence.NewMemStore()
	_, held := storetest.Fill(t, s, 2)
	chain, policy := uuid.New(), uuid.New()
	// batch builds records on chain after head, with the ids given.
	batch := func(head governance.ChainHead, ids ...uuid.UUID) []governance.EvidenceRecord {
		var recs []governance.EvidenceRecord
		for i, id := range ids {
			r, err := governance.NextRecord(head, governance.RecordSpec{
				RecordID: id, Type: governance.GateEvaluated, ChainID: chain, PolicyID: policy,
				PolicyVersion: "v1", Payload: map[string]any{"i": i},
			})
			require.NoError(t, err)
			recs = append(recs, r)
			head = r.Head()
		}
		return recs
	}
	refused := func(recs []governance.EvidenceRecord, kind governance.ConflictKind, id uuid.UUID) {
		t.Helper()
		_, err := s.AppendBatch(ctx, recs)
		var ce *governance.EvidenceConflictError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, kind, ce.Kind)
		require.Equal(t, id.String(), ce.RecordID)
		head, err := s.Head(ctx, chain)
		require.NoError(t, err)
		require.Equal(t, governance.EmptyHead, head)
	}
	b0, b1, b2 := uuid.New(), uuid.New(), uuid.New()
	refused(batch(governance.EmptyHead, b0, held[1].RecordID), governance.ConflictDuplicateRecordID, held[1].RecordID)
	refused(batch(governance.EmptyHead, b0, b0), governance.ConflictDuplicateRecordID, b0)
	refused(batch(governance.EmptyHead, b0, b0, held[0].RecordID), governance.ConflictDuplicateRecordID, held[0].RecordID)
	refused(batch(governance.EmptyHead, b0, b1, b2)[1:], governance.ConflictSequence, b1)

	recs := batch(governance.EmptyHead, b0, b1, b2)
	_, err := s.AppendBatch(ctx, recs)
	require.NoError(t, err, "the refused batches left their ids in the index")
	_, err = s.Append(ctx, recs[2]) // a replay
	var ce *governance.EvidenceConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, governance.ConflictDuplicateRecordID, ce.Kind)
}

// The store keeps records compactly (what the chain implies left out, the
// policy pin shared): every field reads back as appended — types, pins
// that change along the chain, null and set ids — and a record changed in
// place (the tamper cases) changes alone: the next record keeps the
// previous hash it was appended with.
func TestMemStore_ReadsBackEveryField(t *testing.T) {
	ctx := context.Background()
	s := evidence.NewMemStore()
	chain := uuid.New()
	pins := []struct {
		id      uuid.UUID
		version string
	}{{uuid.New(), "v1"}, {uuid.New(), "v1"}, {uuid.New(), "2026-12 \"rc\""}}
	head := governance.EmptyHead
	var want []governance.EvidenceRecord
	for i, typ := range append(governance.EvidenceTypes, governance.EvidenceTypes...) {
		pin := pins[i/3%len(pins)]
		spec := governance.RecordSpec{
			Type: typ, ChainID: chain, PolicyID: pin.id, PolicyVersion: pin.version,
			Payload: map[string]any{"i": i}, CreatedAt: time.Date(2026, 12, 6, 5, 0, i, 1000*i, time.UTC),
		}
		if i%2 == 0 {
			spec.OperationID = uuid.NullUUID{UUID: uuid.New(), Valid: true}
		}
		if typ == governance.RecordSuperseded {
			spec.SupersedesRecordID = uuid.NullUUID{UUID: want[0].RecordID, Valid: true}
		}
		r, err := governance.NextRecord(head, spec)
		require.NoError(t, err)
		_, err = s.Append(ctx, r)
		require.NoError(t, err)
		want = append(want, r)
		head = r.Head()
	}
	got, err := s.Read(ctx, chain, -1)
	require.NoError(t, err)
	require.Equal(t, want, got)

	evidence.TamperMem(s, chain, 4, func(r *governance.EvidenceRecord) { r.ChainHash = want[9].ChainHash })
	got, err = s.Read(ctx, chain, 3)
	require.NoError(t, err)
	require.Equal(t, want[9].ChainHash, got[0].ChainHash)
	require.Equal(t, want[4].ChainHash, got[1].PreviousChainHash)
	require.Equal(t, want[5:], got[1:])
	res, err := s.Verify(ctx, chain, head.Hash)
	require.NoError(t, err)
	require.False(t, res.Valid)
}

// The arena's encoding gives back every record as appended, whatever the
// chain holds: operation ids shared with the record before or not, times
// shared or not, pins that change, supersedes ids, payloads longer than a
// chunk, batches of any size, and a record changed in place (kept whole)
// in the middle; read from any point.
func FuzzMemStore_ReadsBackAsAppended(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(3), uint8(0))
	f.Add([]byte{0x41, 0x82, 0xc3, 0x14, 0xff, 0x7f, 0x33}, uint8(1), uint8(2))
	f.Add([]byte{0x20, 0x20, 0x21, 0x22, 0x60, 0xe0}, uint8(4), uint8(4))
	f.Fuzz(func(t *testing.T, steps []byte, tamperAt, tamperKind uint8) {
		if len(steps) > 64 {
			steps = steps[:64]
		}
		ctx := context.Background()
		s := evidence.NewMemStore()
		chain := uuid.New()
		pins := []uuid.UUID{uuid.New(), uuid.New()}
		head := governance.EmptyHead
		op := uuid.NullUUID{UUID: uuid.New(), Valid: true}
		at := time.Date(2026, 12, 6, 7, 0, 0, 0, time.UTC)
		var want, pending []governance.EvidenceRecord
		flush := func() {
			if len(pending) == 0 {
				return
			}
			_, err := s.AppendBatch(ctx, pending)
			require.NoError(t, err)
			want, pending = append(want, pending...), nil
		}
		for i, b := range steps {
			switch b & 3 { // the operation id: none, the one before, a new one
			case 0:
				op = uuid.NullUUID{}
			case 2, 3:
				op = uuid.NullUUID{UUID: uuid.New(), Valid: true}
			}
			if b&4 != 0 {
				at = at.Add(time.Duration(b) * time.Microsecond)
			}
			spec := governance.RecordSpec{
				Type: governance.EvidenceTypes[int(b>>3)%len(governance.EvidenceTypes)], ChainID: chain, OperationID: op,
				PolicyID: pins[int(b>>5)&1], PolicyVersion: []string{"v1", "v2 \"rc\""}[int(b>>6)&1], CreatedAt: at,
				Payload: map[string]any{"i": i, "text": strings.Repeat("é", int(b)*int(b)%997)},
			}
			if b%7 == 0 {
				spec.Payload = map[string]any{"long": strings.Repeat("x", 70<<10)} // longer than a chunk
			}
			if b&0x10 != 0 && len(want)+len(pending) > 0 {
				spec.SupersedesRecordID = uuid.NullUUID{UUID: uuid.New(), Valid: true}
			}
			r, err := governance.NextRecord(head, spec)
			require.NoError(t, err)
			pending = append(pending, r)
			head = r.Head()
			if b%3 == 0 {
				flush()
			}
		}
		flush()
		if len(want) == 0 {
			return
		}
		if k := int(tamperAt) % len(want); tamperKind%6 != 0 {
			otherOp := uuid.NullUUID{UUID: uuid.New(), Valid: true}
			mutate := []func(*governance.EvidenceRecord){
				func(r *governance.EvidenceRecord) { r.ChainHash = strings.ToUpper(r.ChainHash) },
				func(r *governance.EvidenceRecord) { r.PolicyVersion += "'" },
				func(r *governance.EvidenceRecord) { r.CreatedAt = r.CreatedAt.In(time.FixedZone("X", 3600)) },
				func(r *governance.EvidenceRecord) { r.RecordType = "unknown" },
				func(r *governance.EvidenceRecord) { r.OperationID = otherOp },
			}[tamperKind%6-1]
			evidence.TamperMem(s, chain, k, mutate)
			mutate(&want[k])
		}
		for _, after := range []int64{-1, 0, int64(tamperAt) % int64(len(want)), int64(len(want)) - 2} {
			got, err := s.Read(ctx, chain, after)
			require.NoError(t, err)
			start := min(max(after, -1), int64(len(want))-1) + 1
			require.Equal(t, append([]governance.EvidenceRecord{}, want[start:]...), got, "after %d", after)
		}
		h, err := s.Head(ctx, chain)
		require.NoError(t, err)
		require.Equal(t, want[len(want)-1].Head(), h)
	})
}
