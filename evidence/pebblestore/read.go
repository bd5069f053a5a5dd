package pebblestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// Reads (Read, Head, Verify) see every batch Pebble has applied, which
// includes a batch whose Append is still waiting for its WAL sync: Pebble
// publishes a batch before its fsync. Only a returned Append promises that
// its record survives a crash.

// Read implements evidence.Store. A stored value that does not decode is
// an error wrapping ErrCorrupt (Verify reports it as CONTENT_MISMATCH).
func (s *Store) Read(ctx context.Context, chainID uuid.UUID, afterSequence int64) ([]governance.EvidenceRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	if afterSequence == math.MaxInt64 {
		return []governance.EvidenceRecord{}, nil // nothing follows; +1 would wrap to the start
	}
	lower, upper := chainBounds(chainID, 0)
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: read chain %s: %w: %w", chainID, ErrIO, err)
	}
	out := []governance.EvidenceRecord{}
	for ok := seekRecord(it, chainID, afterSequence+1); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			break // reported by it.Error below
		}
		if _, err := recordsIn(v, nil, func(r governance.EvidenceRecord) bool {
			if r.Sequence > afterSequence {
				out = append(out, r)
			}
			return true
		}); err != nil {
			_ = it.Close()
			return nil, fmt.Errorf("%w: chain %s record key %x: %w", ErrCorrupt, chainID, it.Key(), err)
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblestore: read chain %s: %w: %w", chainID, ErrIO, err)
	}
	return out, nil
}

// seekRecord positions it, bounded to the chain, on the value holding the
// record of sequence seq (a batch value starts at its first record's key),
// or on the chain's first value when none starts at or before seq.
func seekRecord(it *pebble.Iterator, chainID uuid.UUID, seq int64) bool {
	if seq <= 0 {
		return it.First()
	}
	var ok bool
	if seq == math.MaxInt64 {
		ok = it.Last()
	} else {
		ok = it.SeekLT(recordKey(chainID, seq+1))
	}
	return ok || it.First()
}

// Head implements evidence.Store. It answers from the head the store keeps
// for a chain it has appended to (the controller asks before every batch),
// else reads the persisted head: no scan. Either is the head of the last
// applied batch, as a read of the database would see it.
func (s *Store) Head(ctx context.Context, chainID uuid.UUID) (governance.ChainHead, error) {
	if err := ctx.Err(); err != nil {
		return governance.EmptyHead, err
	}
	if err := s.enter(); err != nil {
		return governance.EmptyHead, err
	}
	defer s.closeMu.RUnlock()
	c := s.chain(chainID)
	defer s.release(chainID, c)
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.chainHead(c, chainID)
}

// chainHead is c's head, read from Pebble the first time. The caller holds
// c.mu.
func (s *Store) chainHead(c *chainState, chainID uuid.UUID) (governance.ChainHead, error) {
	if !c.loaded {
		h, err := s.readHead(s.db, chainID)
		if err != nil {
			return governance.EmptyHead, err
		}
		c.head, c.loaded = h, true
	}
	return c.head, nil
}

// readHead reads the chain's head from its last record: the records of a
// chain are one key range in sequence order, and an append writes its
// records in one batch, so the last one is the head of the last applied
// batch. One seek, no scan.
func (s *Store) readHead(r pebble.Reader, chainID uuid.UUID) (governance.ChainHead, error) {
	lower, upper := chainBounds(chainID, 0)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return governance.EmptyHead, fmt.Errorf("pebblestore: read head of %s: %w: %w", chainID, ErrIO, err)
	}
	head := governance.EmptyHead
	var decodeErr error
	if it.Last() {
		if v, err := it.ValueAndErr(); err == nil {
			// The value's records must run on from its key's sequence, in
			// this chain; the last one is the head.
			want := int64(binary.BigEndian.Uint64(it.Key()[keyLenRecord-8:]))
			var misplaced error
			_, decodeErr = recordsIn(v, nil, func(rec governance.EvidenceRecord) bool {
				if rec.Sequence != want || rec.ChainID != chainID {
					misplaced = fmt.Errorf("%w: record of sequence %d under key %x", errMalformed, rec.Sequence, it.Key())
					return false
				}
				head, want = rec.Head(), want+1
				return true
			})
			if decodeErr == nil {
				decodeErr = misplaced
			}
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return governance.EmptyHead, fmt.Errorf("pebblestore: read head of %s: %w: %w", chainID, ErrIO, err)
	}
	if decodeErr != nil {
		return governance.EmptyHead, fmt.Errorf("%w: head of %s: %w", ErrCorrupt, chainID, decodeErr)
	}
	return head, nil
}

// Verify implements evidence.Store. It streams the chain from a Pebble
// snapshot through evidence.Verifier: memory stays bounded by one record
// whatever the chain's length, and appends that land meanwhile are not
// seen. A value that does not decode is CONTENT_MISMATCH (or
// UNSUPPORTED_ALGORITHM for an unknown format byte), naming the record id
// it holds; a failed read is an error wrapping ErrIO, never a result.
func (s *Store) Verify(ctx context.Context, chainID uuid.UUID, expectedHead string) (governance.VerificationResult, error) {
	if err := ctx.Err(); err != nil {
		return governance.VerificationResult{}, err
	}
	if err := s.enter(); err != nil {
		return governance.VerificationResult{}, err
	}
	defer s.closeMu.RUnlock()

	snap := s.db.NewSnapshot()
	defer func() { _ = snap.Close() }()
	lower, upper := chainBounds(chainID, 0)
	it, err := snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return governance.VerificationResult{}, fmt.Errorf("pebblestore: verify chain %s: %w: %w", chainID, ErrIO, err)
	}
	v := evidence.NewVerifier()
	var (
		verified governance.ChainHead
		checked  int64
		undec    *governance.VerificationResult
		scratch  []byte
	)
	for ok := it.First(); ok; ok = it.Next() {
		if checked&1023 == 0 {
			if err := ctx.Err(); err != nil {
				_ = it.Close()
				return governance.VerificationResult{}, err
			}
		}
		val, err := it.ValueAndErr()
		if err != nil {
			break // reported by it.Error below
		}
		added := true
		id, err := recordsIn(val, &scratch, func(r governance.EvidenceRecord) bool {
			if added = v.Add(r); added {
				verified, checked = r.Head(), checked+1
			}
			return added
		})
		if err != nil {
			code := governance.ContentMismatch
			if errors.Is(err, errUnknownCodec) {
				code = governance.UnsupportedAlgorithm
			}
			undec = &governance.VerificationResult{
				VerifiedHead: verified.Hash, CheckedRecords: checked,
				FailureCode: code, FailedRecordID: id,
			}
			break
		}
		if !added {
			break
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return governance.VerificationResult{}, fmt.Errorf("pebblestore: verify chain %s: %w: %w", chainID, ErrIO, err)
	}
	if undec != nil {
		return *undec, nil
	}
	return v.Result(expectedHead), nil
}
