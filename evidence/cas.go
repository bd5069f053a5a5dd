package evidence

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Every backend applies the compare-and-append rules in one order:
//  1. r.CheckIntegrity (both hashes recomputed, canonical payload, sha256-v1),
//     before taking the chain lock;
//  2. duplicate record id, then duplicate chain hash, against the store's
//     indexes (so a replayed record is reported as a duplicate); after step
//     1 a repeated chain hash implies a repeated record id (the id is part
//     of the hashed input), which is how MemStore finds one;
//  3. CheckPosition against the chain's head, under the chain lock.

// CheckRecords is step 1 for a batch, before any lock: the caller's context,
// then every record's integrity.
func CheckRecords(ctx context.Context, records []governance.EvidenceRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, r := range records {
		if err := r.CheckIntegrity(); err != nil {
			return err
		}
	}
	return nil
}

// CheckSealed is step 1 for a sealed batch (SealedAppender): the caller's
// context, then the batch's integrity check, which answers as
// CheckRecords would on its records.
func CheckSealed(ctx context.Context, b *governance.SealedBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.CheckIntegrity()
}

// CheckPosition checks that r is the next record after head: sequence
// head+1 and previous hash equal to head's hash (0 and none for a missing
// chain).
func CheckPosition(head governance.ChainHead, r governance.EvidenceRecord) error {
	if want := head.Sequence + 1; r.Sequence != want {
		return &governance.EvidenceConflictError{
			ChainID: r.ChainID.String(), RecordID: r.RecordID.String(), Kind: governance.ConflictSequence,
			Reason: fmt.Sprintf("sequence %d, want %d", r.Sequence, want),
		}
	}
	if r.PreviousChainHash != head.Hash {
		return &governance.EvidenceConflictError{
			ChainID: r.ChainID.String(), RecordID: r.RecordID.String(), Kind: governance.ConflictStaleHead,
			Reason: "previous_chain_hash is not the chain's head",
		}
	}
	return nil
}

// CheckBatch validates the positions of a batch for one chain starting at
// head: every record follows the one before it, and no id or hash repeats
// inside the batch. Integrity (step 1) and duplicates against the store
// (step 2) are checked by the caller first.
func CheckBatch(head governance.ChainHead, records []governance.EvidenceRecord) error {
	if len(records) == 0 {
		return nil
	}
	seen := seenInBatch{records: records}
	chain := records[0].ChainID
	for i := range records {
		// NB: by index, not by value: a record is a few hundred bytes, and
		// this runs for every batch of every store.
		r := &records[i]
		if r.ChainID != chain {
			return ErrBatchChains
		}
		if err := seen.repeated(i); err != nil {
			return err
		}
		if err := CheckPosition(head, *r); err != nil {
			return err
		}
		head = governance.ChainHead{Sequence: r.Sequence, Hash: r.ChainHash}
	}
	return nil
}

// seenInBatch finds a record id or chain hash that repeats inside a batch:
// an operation's batch (a few records) by comparing with the records
// before, without allocating; a longer one (an import) through two maps.
type seenInBatch struct {
	records []governance.EvidenceRecord
	ids     map[uuid.UUID]bool
	hashes  map[string]bool
}

// smallBatch is the longest batch checked by comparison.
const smallBatch = 16

// repeated reports records[i] if its id or chain hash is one of the
// records before it.
func (s *seenInBatch) repeated(i int) error {
	r := &s.records[i]
	if len(s.records) <= smallBatch {
		for j := range i {
			if s.records[j].RecordID == r.RecordID {
				return DuplicateID(*r)
			}
		}
		for j := range i {
			if s.records[j].ChainHash == r.ChainHash {
				return DuplicateHash(*r)
			}
		}
		return nil
	}
	if s.ids == nil {
		s.ids, s.hashes = make(map[uuid.UUID]bool, len(s.records)), make(map[string]bool, len(s.records))
	}
	if s.ids[r.RecordID] {
		return DuplicateID(*r)
	}
	if s.hashes[r.ChainHash] {
		return DuplicateHash(*r)
	}
	s.ids[r.RecordID], s.hashes[r.ChainHash] = true, true
	return nil
}

// DuplicateID is the conflict for a record id the store already holds.
func DuplicateID(r governance.EvidenceRecord) error {
	return &governance.EvidenceConflictError{
		ChainID: r.ChainID.String(), RecordID: r.RecordID.String(), Kind: governance.ConflictDuplicateRecordID,
		Reason: "record id already stored",
	}
}

// DuplicateHash is the conflict for a chain hash the store already holds.
func DuplicateHash(r governance.EvidenceRecord) error {
	return &governance.EvidenceConflictError{
		ChainID: r.ChainID.String(), RecordID: r.RecordID.String(), Kind: governance.ConflictDuplicateHash,
		Reason: "chain hash already stored",
	}
}
