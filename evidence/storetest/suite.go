package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// Run runs every conformance case against stores made by h.New.
func Run(t *testing.T, h Harness) {
	t.Run("AppendReadHead", func(t *testing.T) { testAppendReadHead(t, h) })
	t.Run("MissingChainAcceptsOnlyGenesis", func(t *testing.T) { testMissingChain(t, h) })
	t.Run("WrongSequence", func(t *testing.T) { testWrongSequence(t, h) })
	t.Run("StalePreviousHash", func(t *testing.T) { testStaleHead(t, h) })
	t.Run("DuplicateRecordID", func(t *testing.T) { testDuplicateID(t, h) })
	t.Run("ReplayRefused", func(t *testing.T) { testReplay(t, h) })
	t.Run("IntegrityRefused", func(t *testing.T) { testIntegrity(t, h) })
	t.Run("BatchAtomic", func(t *testing.T) { testBatch(t, h) })
	t.Run("SealedBatch", func(t *testing.T) { testSealed(t, h) })
	t.Run("VerifyValid", func(t *testing.T) { testVerifyValid(t, h) })
	t.Run("VerifyEmptyChain", func(t *testing.T) { testVerifyEmpty(t, h) })
	t.Run("VerifyStaleHead", func(t *testing.T) { testVerifyStaleHead(t, h) })
	t.Run("VerifyExpectedHeadMismatch", func(t *testing.T) { testVerifyHeadMismatch(t, h) })
	t.Run("VerifyWhileAppending", func(t *testing.T) { testVerifyWhileAppending(t, h) })
	t.Run("ConcurrentAppendsOneChain", func(t *testing.T) { testConcurrentOneChain(t, h) })
	t.Run("IndependentChainsInParallel", func(t *testing.T) { testIndependentChains(t, h) })
	if h.Rewrite != nil && h.Delete != nil {
		t.Run("TamperMutation", func(t *testing.T) { testTamperMutation(t, h) })
		t.Run("TamperBrokenLink", func(t *testing.T) { testTamperBrokenLink(t, h) })
		t.Run("TamperUnsupportedAlgorithm", func(t *testing.T) { testTamperAlgorithm(t, h) })
		t.Run("TamperSequenceGap", func(t *testing.T) { testTamperGap(t, h) })
		t.Run("TamperNonzeroFirstSequence", func(t *testing.T) { testTamperFirst(t, h) })
	}
}

var policyID = uuid.MustParse("0b8e90e9-f646-4d5f-9ae8-5d0928398f9f")

// Next builds the record that follows head on chain, with a small approved
// payload. Exported for backends' own tests and benchmarks.
func Next(t testing.TB, head governance.ChainHead, chain uuid.UUID) governance.EvidenceRecord {
	t.Helper()
	r, err := governance.NextRecord(head, governance.RecordSpec{
		Type:          governance.GateEvaluated,
		ChainID:       chain,
		OperationID:   uuid.NullUUID{UUID: uuid.New(), Valid: true},
		PolicyID:      policyID,
		PolicyVersion: "2026.11.1",
		Payload: map[string]any{
			"gate_id": "pathguard", "level": "hard", "decision": "allow",
			"reason_code": "path.inside_root", "duration_us": 42, "fields": []string{"path"},
		},
		CreatedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(time.Duration(head.Sequence+1) * time.Microsecond),
	})
	require.NoError(t, err)
	return r
}

// Fill appends n records to a new chain and returns the chain id and records.
func Fill(t testing.TB, s evidence.Store, n int) (uuid.UUID, []governance.EvidenceRecord) {
	t.Helper()
	chain := uuid.New()
	head := governance.EmptyHead
	recs := make([]governance.EvidenceRecord, 0, n)
	for i := 0; i < n; i++ {
		r := Next(t, head, chain)
		rc, err := s.Append(context.Background(), r)
		require.NoError(t, err)
		require.Equal(t, r.ChainHash, rc.HeadHash)
		require.Equal(t, int64(i), rc.Sequence)
		head = r.Head()
		recs = append(recs, r)
	}
	return chain, recs
}

func requireConflict(t *testing.T, err error, kind governance.ConflictKind) {
	t.Helper()
	var ce *governance.EvidenceConflictError
	require.True(t, errors.As(err, &ce), "want EvidenceConflictError, got %v", err)
	require.Equal(t, kind, ce.Kind)
}

func requireHead(t *testing.T, s evidence.Store, chain uuid.UUID, want governance.ChainHead) {
	t.Helper()
	got, err := s.Head(context.Background(), chain)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func requireResult(t *testing.T, got governance.VerificationResult, code governance.VerificationFailureCode, checked int64, failed uuid.UUID) {
	t.Helper()
	require.False(t, got.Valid)
	require.Equal(t, code, got.FailureCode)
	require.Equal(t, checked, got.CheckedRecords)
	if failed == uuid.Nil {
		require.False(t, got.FailedRecordID.Valid)
	} else {
		require.Equal(t, uuid.NullUUID{UUID: failed, Valid: true}, got.FailedRecordID)
	}
}

func testAppendReadHead(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	chain, recs := Fill(t, s, 5)
	got, err := s.Read(ctx, chain, -1)
	require.NoError(t, err)
	require.Equal(t, recs, got)
	got, err = s.Read(ctx, chain, 2)
	require.NoError(t, err)
	require.Equal(t, recs[3:], got)
	got, err = s.Read(ctx, chain, 4)
	require.NoError(t, err)
	require.Empty(t, got)
	got, err = s.Read(ctx, uuid.New(), -1)
	require.NoError(t, err)
	require.Empty(t, got)
	got, err = s.Read(ctx, chain, math.MaxInt64)
	require.NoError(t, err)
	require.Empty(t, got, "no wrap past the largest sequence")
	got, err = s.Read(ctx, chain, -7)
	require.NoError(t, err)
	require.Equal(t, recs, got)
	requireHead(t, s, chain, recs[4].Head())
	requireHead(t, s, uuid.New(), governance.EmptyHead)

	// The caller owns what Read returns.
	got, _ = s.Read(ctx, chain, -1)
	got[0].PayloadJSON = "{}"
	again, _ := s.Read(ctx, chain, -1)
	require.Equal(t, recs[0], again[0])
}

func testMissingChain(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	chain := uuid.New()
	// A record claiming sequence 1 on a missing chain.
	r0 := Next(t, governance.EmptyHead, chain)
	r1 := Next(t, r0.Head(), chain)
	_, err := s.Append(ctx, r1)
	requireConflict(t, err, governance.ConflictSequence)
	// Sequence 0 with a previous hash.
	forged := Next(t, governance.EmptyHead, chain)
	forged.PreviousChainHash = r0.ChainHash
	forged.ChainHash, err = forged.ComputeChainHash()
	require.NoError(t, err)
	_, err = s.Append(ctx, forged)
	requireConflict(t, err, governance.ConflictStaleHead)
	requireHead(t, s, chain, governance.EmptyHead)
	_, err = s.Append(ctx, r0)
	require.NoError(t, err)
}

func testWrongSequence(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 3)
	head := recs[2].Head()
	skip := Next(t, governance.ChainHead{Sequence: head.Sequence + 1, Hash: head.Hash}, chain)
	_, err := s.Append(context.Background(), skip)
	requireConflict(t, err, governance.ConflictSequence)
	requireHead(t, s, chain, head)
}

func testStaleHead(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 3)
	// Built on record 1's head but claiming the right next sequence.
	stale := Next(t, governance.ChainHead{Sequence: 2, Hash: recs[1].ChainHash}, chain)
	_, err := s.Append(context.Background(), stale)
	requireConflict(t, err, governance.ConflictStaleHead)
	// A writer that raced and lost: built on the same head as an accepted record.
	lost := Next(t, recs[1].Head(), chain)
	_, err = s.Append(context.Background(), lost)
	require.Error(t, err)
	requireHead(t, s, chain, recs[2].Head())
}

func testDuplicateID(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	chain, recs := Fill(t, s, 2)
	// Same record id, correct position: still refused.
	r, err := governance.NextRecord(recs[1].Head(), governance.RecordSpec{
		RecordID: recs[0].RecordID, Type: governance.GateEvaluated, ChainID: chain,
		PolicyID: policyID, PolicyVersion: "2026.11.1",
	})
	require.NoError(t, err)
	_, err = s.Append(ctx, r)
	requireConflict(t, err, governance.ConflictDuplicateRecordID)
	// A record id used on another chain.
	other, err := governance.NextRecord(governance.EmptyHead, governance.RecordSpec{
		RecordID: recs[0].RecordID, Type: governance.PolicyBound, ChainID: uuid.New(),
		PolicyID: policyID, PolicyVersion: "2026.11.1",
	})
	require.NoError(t, err)
	_, err = s.Append(ctx, other)
	requireConflict(t, err, governance.ConflictDuplicateRecordID)
	requireHead(t, s, chain, recs[1].Head())
}

func testReplay(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 2)
	// Replaying a committed record is not idempotent success.
	_, err := s.Append(context.Background(), recs[1])
	var ce *governance.EvidenceConflictError
	require.True(t, errors.As(err, &ce), "got %v", err)
	// The chain hash covers the record id, so a replay is the only way to
	// present a stored hash; the id check fires first.
	require.Equal(t, governance.ConflictDuplicateRecordID, ce.Kind)
	requireHead(t, s, chain, recs[1].Head())
}

func testIntegrity(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	chain := uuid.New()
	good := Next(t, governance.EmptyHead, chain)
	cases := map[string]func(r *governance.EvidenceRecord){
		"payload changed":       func(r *governance.EvidenceRecord) { r.PayloadJSON = `{"gate_id":"other"}` },
		"payload digest forged": func(r *governance.EvidenceRecord) { r.PayloadDigest = governance.SHA256Hex([]byte("x")) },
		"chain hash forged":     func(r *governance.EvidenceRecord) { r.ChainHash = governance.SHA256Hex([]byte("x")) },
		"field changed":         func(r *governance.EvidenceRecord) { r.PolicyVersion = "other" },
		"not canonical": func(r *governance.EvidenceRecord) {
			r.PayloadJSON = `{ "a": 1 }`
			r.PayloadDigest = governance.SHA256Hex([]byte(r.PayloadJSON))
			r.ChainHash, _ = r.ComputeChainHash()
		},
		"float in payload": func(r *governance.EvidenceRecord) {
			r.PayloadJSON = `{"a":1.5}`
			r.PayloadDigest = governance.SHA256Hex([]byte(r.PayloadJSON))
			r.ChainHash, _ = r.ComputeChainHash()
		},
		"unsupported algorithm": func(r *governance.EvidenceRecord) {
			r.HashAlgorithm = "sha512-v9"
			r.ChainHash, _ = r.ComputeChainHash()
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			r := good
			mutate(&r)
			_, err := s.Append(ctx, r)
			var ie *governance.EvidenceIntegrityError
			require.True(t, errors.As(err, &ie), "got %v", err)
			requireHead(t, s, chain, governance.EmptyHead)
		})
	}
	_, err := s.Append(ctx, good)
	require.NoError(t, err)
}

func testBatch(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	chain, recs := Fill(t, s, 1)
	a := Next(t, recs[0].Head(), chain)
	b := Next(t, a.Head(), chain)
	bad := Next(t, b.Head(), chain)
	bad.PayloadJSON = `{"x":1}`
	_, err := evidence.AppendAll(ctx, s, []governance.EvidenceRecord{a, b, bad})
	require.Error(t, err)
	if _, atomic := s.(evidence.BatchAppender); atomic {
		requireHead(t, s, chain, recs[0].Head())
		rcs, err := evidence.AppendAll(ctx, s, []governance.EvidenceRecord{a, b})
		require.NoError(t, err)
		require.Len(t, rcs, 2)
		require.Equal(t, b.ChainHash, rcs[1].HeadHash)
		requireHead(t, s, chain, b.Head())
		_, err = s.(evidence.BatchAppender).AppendBatch(ctx, []governance.EvidenceRecord{Next(t, b.Head(), chain), Next(t, governance.EmptyHead, uuid.New())})
		require.ErrorIs(t, err, evidence.ErrBatchChains)
		requireHead(t, s, chain, b.Head())
	}
}

// sealedSpecs are n records' specs for chain, as Next makes them.
func sealedSpecs(chain uuid.UUID, n int) []governance.RecordSpec {
	specs := make([]governance.RecordSpec, n)
	for i := range specs {
		specs[i] = governance.RecordSpec{
			Type: governance.GateEvaluated, ChainID: chain, OperationID: uuid.NullUUID{UUID: uuid.New(), Valid: true},
			PolicyID: policyID, PolicyVersion: "2026.11.1",
			Payload:   governance.NewFields(3).String("gate_id", "pathguard").String("decision", "allow").Int("i", int64(i)),
			CreatedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		}
	}
	return specs
}

// testSealed: a sealed batch (evidence.AppendSealed) appends as AppendAll
// would, and is refused as AppendAll would refuse its records: a changed
// record is an integrity error, a stale head a conflict, nothing appended.
func testSealed(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	chain, recs := Fill(t, s, 1)
	b, err := governance.SealRecords(recs[0].Head(), sealedSpecs(chain, 3))
	require.NoError(t, err)
	sealed := append([]governance.EvidenceRecord(nil), b.Records()...)
	rcs, err := evidence.AppendSealed(ctx, s, b)
	require.NoError(t, err)
	require.Len(t, rcs, 3)
	require.Equal(t, sealed[2].ChainHash, rcs[2].HeadHash)
	b.Release() // NB: after the receipts, which may be the batch's
	got, err := s.Read(ctx, chain, 0)
	require.NoError(t, err)
	require.Equal(t, sealed, got)

	head := sealed[2].Head()
	b, err = governance.SealRecords(head, sealedSpecs(chain, 2))
	require.NoError(t, err)
	b.Records()[1].PayloadJSON = `{"decision":"deny","gate_id":"pathguard","i":1}`
	_, err = evidence.AppendSealed(ctx, s, b)
	b.Release()
	var ie *governance.EvidenceIntegrityError
	require.ErrorAs(t, err, &ie)
	requireHead(t, s, chain, head)

	b, err = governance.SealRecords(recs[0].Head(), sealedSpecs(chain, 2))
	require.NoError(t, err)
	_, err = evidence.AppendSealed(ctx, s, b)
	b.Release()
	requireConflict(t, err, governance.ConflictSequence)
	requireHead(t, s, chain, head)
}

func testVerifyValid(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 10)
	res, err := s.Verify(context.Background(), chain, recs[9].ChainHash)
	require.NoError(t, err)
	require.Equal(t, governance.VerificationResult{Valid: true, VerifiedHead: recs[9].ChainHash, CheckedRecords: 10}, res)
}

func testVerifyEmpty(t *testing.T, h Harness) {
	s := h.New(t)
	res, err := s.Verify(context.Background(), uuid.New(), governance.SHA256Hex(nil))
	require.NoError(t, err)
	requireResult(t, res, governance.BrokenLink, 0, uuid.Nil)
	require.Empty(t, res.VerifiedHead)
}

func testVerifyStaleHead(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 4)
	// A trusted head taken before the last append no longer matches.
	res, err := s.Verify(context.Background(), chain, recs[2].ChainHash)
	require.NoError(t, err)
	requireResult(t, res, governance.BrokenLink, 4, recs[3].RecordID)
	require.Equal(t, recs[3].ChainHash, res.VerifiedHead)
}

func testVerifyHeadMismatch(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 3)
	res, err := s.Verify(context.Background(), chain, governance.SHA256Hex([]byte("elsewhere")))
	require.NoError(t, err)
	requireResult(t, res, governance.BrokenLink, 3, recs[2].RecordID)
}

func testVerifyWhileAppending(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	chain, recs := Fill(t, s, 50)
	head := recs[len(recs)-1].Head()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			r := Next(t, head, chain)
			if _, err := s.Append(ctx, r); err != nil {
				return
			}
			head = r.Head()
		}
	}()
	for i := 0; i < 20; i++ {
		res, err := s.Verify(ctx, chain, recs[49].ChainHash)
		require.NoError(t, err)
		// Either exactly the 50 records we know, or a longer chain that is
		// intact up to its own end: never a content or link failure inside.
		if !res.Valid {
			require.Equal(t, governance.BrokenLink, res.FailureCode)
			require.GreaterOrEqual(t, res.CheckedRecords, int64(50))
		}
	}
	<-done
	final, err := s.Head(ctx, chain)
	require.NoError(t, err)
	res, err := s.Verify(ctx, chain, final.Hash)
	require.NoError(t, err)
	require.True(t, res.Valid)
	require.Equal(t, int64(100), res.CheckedRecords)
}

// testConcurrentOneChain: 64 writers race on one chain, each retrying on
// conflict as an independent writer must; no gap, no duplicate, every
// writer's records present.
func testConcurrentOneChain(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	chain := uuid.New()
	const writers, each = 64, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < each; {
				head, err := s.Head(ctx, chain)
				if err != nil {
					errs <- err
					return
				}
				r := Next(t, head, chain)
				if _, err := s.Append(ctx, r); err != nil {
					var ce *governance.EvidenceConflictError
					if errors.As(err, &ce) {
						continue
					}
					errs <- err
					return
				}
				n++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	recs, err := s.Read(ctx, chain, -1)
	require.NoError(t, err)
	require.Len(t, recs, writers*each)
	seen := map[uuid.UUID]bool{}
	for i, r := range recs {
		require.Equal(t, int64(i), r.Sequence)
		require.False(t, seen[r.RecordID])
		seen[r.RecordID] = true
	}
	res, err := s.Verify(ctx, chain, recs[len(recs)-1].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid)
}

func testIndependentChains(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	const chains, each = 16, 20
	heads := make([]governance.ChainHead, chains)
	ids := make([]uuid.UUID, chains)
	var wg sync.WaitGroup
	for c := 0; c < chains; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[c] = uuid.New()
			head := governance.EmptyHead
			for i := 0; i < each; i++ {
				r := Next(t, head, ids[c])
				if _, err := s.Append(ctx, r); err != nil {
					panic(fmt.Sprintf("chain %d append %d: %v", c, i, err))
				}
				head = r.Head()
			}
			heads[c] = head
		}()
	}
	wg.Wait()
	for c := 0; c < chains; c++ {
		res, err := s.Verify(ctx, ids[c], heads[c].Hash)
		require.NoError(t, err)
		require.True(t, res.Valid)
		require.Equal(t, int64(each), res.CheckedRecords)
	}
}

func testTamperMutation(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 5)
	h.Rewrite(t, s, chain, 2, func(r *governance.EvidenceRecord) { r.PayloadJSON = `{"decision":"allow"}` })
	res, err := s.Verify(context.Background(), chain, recs[4].ChainHash)
	require.NoError(t, err)
	requireResult(t, res, governance.ContentMismatch, 2, recs[2].RecordID)
	require.Equal(t, recs[1].ChainHash, res.VerifiedHead)

	// A consistent rewrite (digest recomputed) still breaks the chain hash.
	s2 := h.New(t)
	chain2, recs2 := Fill(t, s2, 3)
	h.Rewrite(t, s2, chain2, 1, func(r *governance.EvidenceRecord) {
		r.PayloadJSON = `{"decision":"allow"}`
		r.PayloadDigest = governance.SHA256Hex([]byte(r.PayloadJSON))
	})
	res, err = s2.Verify(context.Background(), chain2, recs2[2].ChainHash)
	require.NoError(t, err)
	requireResult(t, res, governance.ContentMismatch, 1, recs2[1].RecordID)
}

func testTamperBrokenLink(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 4)
	h.Rewrite(t, s, chain, 2, func(r *governance.EvidenceRecord) { r.PreviousChainHash = recs[0].ChainHash })
	res, err := s.Verify(context.Background(), chain, recs[3].ChainHash)
	require.NoError(t, err)
	requireResult(t, res, governance.BrokenLink, 2, recs[2].RecordID)
}

func testTamperAlgorithm(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 3)
	h.Rewrite(t, s, chain, 0, func(r *governance.EvidenceRecord) { r.HashAlgorithm = "sha3-v2" })
	res, err := s.Verify(context.Background(), chain, recs[2].ChainHash)
	require.NoError(t, err)
	requireResult(t, res, governance.UnsupportedAlgorithm, 0, recs[0].RecordID)
	require.Empty(t, res.VerifiedHead)
}

func testTamperGap(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 5)
	h.Delete(t, s, chain, 2)
	res, err := s.Verify(context.Background(), chain, recs[4].ChainHash)
	require.NoError(t, err)
	requireResult(t, res, governance.BrokenLink, 2, recs[3].RecordID)
}

func testTamperFirst(t *testing.T, h Harness) {
	s := h.New(t)
	chain, recs := Fill(t, s, 3)
	h.Delete(t, s, chain, 0)
	res, err := s.Verify(context.Background(), chain, recs[2].ChainHash)
	require.NoError(t, err)
	requireResult(t, res, governance.BrokenLink, 0, recs[1].RecordID)
	require.Empty(t, res.VerifiedHead)
}
