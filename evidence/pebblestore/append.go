package pebblestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// Append implements evidence.Store. It returns only once the record is
// durable in the WAL. ctx is checked before the append starts; once the
// batch is applied the append completes regardless of ctx, so a receipt
// is never lost to a cancellation.
func (s *Store) Append(ctx context.Context, r governance.EvidenceRecord) (governance.AppendReceipt, error) {
	rcs, err := s.AppendBatch(ctx, []governance.EvidenceRecord{r})
	if err != nil {
		return governance.AppendReceipt{}, err
	}
	return rcs[0], nil
}

// AppendBatch implements evidence.BatchAppender: consecutive records of one
// chain, committed in one Pebble batch (all or none) and durable on return.
//
// Checks run in evidence's documented order: every record's integrity
// (before any lock), then duplicate record id (which covers a duplicate
// chain hash, see checkDuplicates) against the store, then position
// against the chain's head.
//
// Group commit: the batch is applied (WAL buffer + memtable, no fsync)
// under the chain lock, and the WAL sync is awaited after releasing it, so
// appends to other chains, and the next append to this chain, share the
// fsync. Appends to one chain stay strictly ordered because each is
// checked against, and applied after, the previous one under the lock;
// the WAL is a prefix on recovery, so a later record never survives
// without an earlier one.
func (s *Store) AppendBatch(ctx context.Context, records []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	if err := evidence.CheckRecords(ctx, records); err != nil || len(records) == 0 {
		return nil, err
	}
	return s.appendChecked(records)
}

// AppendSealed implements evidence.SealedAppender: AppendBatch for a batch
// governance.SealRecords built, whose integrity check (evidence.CheckSealed)
// recomputes every hash as CheckRecords does but reuses the builder's
// canonical text of each unchanged payload instead of encoding it again.
func (s *Store) AppendSealed(ctx context.Context, b *governance.SealedBatch) ([]governance.AppendReceipt, error) {
	records := b.Records()
	if err := evidence.CheckSealed(ctx, b); err != nil || len(records) == 0 {
		return nil, err
	}
	return s.appendChecked(records)
}

// appendChecked is AppendBatch after the records' integrity check.
func (s *Store) appendChecked(records []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	if err := s.enterForAppend(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()

	b, err := s.applyLocked(records[0].ChainID, records, true)
	if err != nil {
		return nil, err
	}
	// NB: outside the chain lock. Other appenders apply meanwhile and one
	// fsync covers them all.
	err = b.SyncWait()
	_ = b.Close()
	if err != nil {
		// The batch is in the memtable and maybe in the WAL on disk: its
		// durability is unknown (fsyncgate), so nothing may be acknowledged
		// on this store again. Reopening replays the WAL and decides.
		s.fence(err)
		return nil, fmt.Errorf("%w (durability unknown: %w)", s.writeError(err), ErrFenced)
	}
	receipts := make([]governance.AppendReceipt, len(records))
	for i, r := range records {
		receipts[i] = governance.ReceiptFor(r)
	}
	return receipts, nil
}

// AppendBatchUnsynced implements evidence.UnsyncedAppender: AppendBatch's
// checks and compare-and-append, applied to the WAL buffer and memtable
// with no sync of its own; the next synced append's fsync covers it.
func (s *Store) AppendBatchUnsynced(ctx context.Context, records []governance.EvidenceRecord) error {
	if ok, err := s.admit(ctx, records); !ok {
		return err
	}
	defer s.closeMu.RUnlock()
	b, err := s.applyLocked(records[0].ChainID, records, false)
	if err != nil {
		return err
	}
	return b.Close()
}

// admit runs the checks every append makes before its batch: the records'
// integrity (before any lock), an open and unfenced store, room on disk.
// When it returns true the caller holds the store's close lock and must
// RUnlock it; false with a nil error is an empty batch (nothing to do).
func (s *Store) admit(ctx context.Context, records []governance.EvidenceRecord) (bool, error) {
	if err := evidence.CheckRecords(ctx, records); err != nil || len(records) == 0 {
		return false, err
	}
	if err := s.enterForAppend(); err != nil {
		return false, err
	}
	return true, nil
}

// enterForAppend checks that the store is open and unfenced and has room on
// disk; on success the caller holds the close lock and must RUnlock it.
func (s *Store) enterForAppend() error {
	if err := s.enter(); err != nil {
		return err
	}
	if s.owned != nil {
		if err := s.owned.ballast.check(); err != nil {
			s.closeMu.RUnlock()
			return err
		}
	}
	s.loadIDs()
	return nil
}

// applyLocked runs the compare-and-append under the chain's lock and
// applies the batch; with sync, the WAL sync is requested but not awaited,
// and the caller must SyncWait. The caller must Close the returned batch.
func (s *Store) applyLocked(chainID uuid.UUID, records []governance.EvidenceRecord, sync bool) (*pebble.Batch, error) {
	// Encoding needs no lock: the records carry their own positions, and
	// the batch is dropped if the position check below fails.
	b := s.db.NewBatch()
	writeRecords(b, records)

	c := s.chain(chainID)
	defer s.release(chainID, c)
	c.mu.Lock()
	defer c.mu.Unlock()
	var stripeBuf [8]int
	stripes := s.lockStripes(stripeBuf[:0], records)
	defer s.unlockStripes(stripes)

	if err := s.checkDuplicates(records); err != nil {
		_ = b.Close()
		return nil, err
	}
	head, err := s.chainHead(c, chainID)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	if err := checkPositions(head, records); err != nil {
		_ = b.Close()
		return nil, err
	}
	apply := func() error { return s.db.ApplyNoSyncWait(b, pebble.Sync) }
	if !sync {
		apply = func() error { return s.db.Apply(b, pebble.NoSync) }
	}
	if err := apply(); err != nil {
		// Pebble fails here only before the batch entered the commit
		// pipeline (a failing pipeline is fatal, see logger.go).
		_ = b.Close()
		return nil, s.writeError(err)
	}
	c.head = records[len(records)-1].Head() // NB: only once the batch is applied
	for _, r := range records {
		s.ids.add(r.RecordID) // NB: under the ids' stripes, before another append of them can look
	}
	return b, nil
}

// checkDuplicates refuses a record id the store holds. The caller holds
// the records' stripes, so no other append can add them between this
// check and the batch's apply.
//
// A duplicate chain hash needs no lookup of its own: the chain hash is
// SHA-256 over a text that contains the record id, and every record here
// passed CheckIntegrity, so two records with one chain hash have one
// record id (short of a SHA-256 collision, which the whole chain's
// tamper evidence already rules out) and the second is refused here, as
// evidence.MemStore refuses it: by its id, which it checks first. The
// duplicate-hash index (e/c) this lookup once read cost a third of an
// append's index writes and half its lookups (docs/performance.md).
func (s *Store) checkDuplicates(records []governance.EvidenceRecord) error {
	if s.allAbsent(records) {
		return nil
	}
	// One iterator for the batch, with L6's bloom filters: Get never reads
	// them (Pebble's IterOptions.UseL6Filters, off for Get), so each
	// lookup of an absent id, which is nearly every lookup, would load and
	// search a data block of the bottom level, where most of a long-lived
	// store's index sits.
	it, err := s.db.NewIter(&idLookupOptions)
	if err != nil {
		return fmt.Errorf("pebblestore: read index: %w: %w", ErrIO, err)
	}
	var k [keyLenID]byte
	for _, r := range records {
		key := putRecordIDKey(k[:0], r.RecordID)
		if it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key) {
			_ = it.Close()
			return evidence.DuplicateID(r)
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return fmt.Errorf("pebblestore: read index: %w: %w", ErrIO, err)
	}
	return nil
}

// allAbsent reports whether the id filter knows that no record id of the
// batch is stored: the common case, answered without Pebble. Otherwise
// (an id maybe stored, or the filter not loaded yet) every id is looked up.
func (s *Store) allAbsent(records []governance.EvidenceRecord) bool {
	for _, r := range records {
		if !s.ids.absent(r.RecordID) {
			return false
		}
	}
	return true
}

// idLookupOptions bound checkDuplicates' iterator to the id index and
// make it read the bottom level's bloom filters (see there). Pebble copies
// them; they are never modified.
var idLookupOptions = pebble.IterOptions{
	LowerBound:   []byte{'e', '/', tagRecordID},
	UpperBound:   []byte{'e', '/', tagRecordID + 1},
	UseL6Filters: true,
}

// writeRecords adds the records (one value, codec 12 for two or more, under
// the first record's key), then their id index entries, to b, encoding
// straight into the batch's buffer.
//
// Why the records first? Pebble inserts a batch's keys into its memtable
// skiplist in batch order, reusing the position of the previous key: a key
// right after it costs no search, any other key a search from the top.
func writeRecords(b *pebble.Batch, records []governance.EvidenceRecord) {
	first := records[0]
	if len(records) == 1 {
		op := b.SetDeferred(keyLenRecord, encodedLen(first))
		putRecordKey(op.Key[:0], first.ChainID, first.Sequence)
		if v := encodeRecord(op.Value[:0], first); len(v) != len(op.Value) {
			panic("pebblestore: encodedLen disagrees with encodeRecord") // a bug, not an input
		}
		_ = op.Finish()
	} else {
		op := b.SetDeferred(keyLenRecord, batchValueLen(records))
		putRecordKey(op.Key[:0], first.ChainID, first.Sequence)
		if v := appendBatchValue(op.Value[:0], records); len(v) != len(op.Value) {
			panic("pebblestore: batchValueLen disagrees with appendBatchValue") // a bug, not an input
		}
		_ = op.Finish()
	}
	for _, r := range records {
		op := b.SetDeferred(keyLenID, 0) // the key is the entry: see keys.go
		putRecordIDKey(op.Key[:0], r.RecordID)
		_ = op.Finish()
	}
}

// checkPositions applies CheckBatch's rules (one chain, no repeat inside
// the batch, consecutive positions) without re-hashing: integrity was
// checked before the lock.
func checkPositions(head governance.ChainHead, records []governance.EvidenceRecord) error {
	for i, r := range records {
		if r.ChainID != records[0].ChainID {
			return evidence.ErrBatchChains
		}
		for _, p := range records[:i] {
			if p.RecordID == r.RecordID {
				return evidence.DuplicateID(r)
			}
			if p.ChainHash == r.ChainHash {
				return evidence.DuplicateHash(r)
			}
		}
		if err := evidence.CheckPosition(head, r); err != nil {
			return err
		}
		head = r.Head()
	}
	return nil
}

var stripeSeed = maphash.MakeSeed()

// lockStripes locks the stripes of every record id of the batch in
// ascending order (no deadlock between batches), appending their indexes
// to idx.
func (s *Store) lockStripes(idx []int, records []governance.EvidenceRecord) []int {
	for _, r := range records {
		idx = append(idx, int(maphash.Bytes(stripeSeed, r.RecordID[:])%uint64(len(s.stripes))))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx {
		s.stripes[i].Lock()
	}
	return idx
}

func (s *Store) unlockStripes(idx []int) {
	for _, i := range idx {
		s.stripes[i].Unlock()
	}
}

// writeError classifies a failed write: a full disk as ErrDiskFull,
// anything else as ErrIO.
func (s *Store) writeError(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("pebblestore: append: %w: %w", ErrDiskFull, err)
	}
	return fmt.Errorf("pebblestore: append: %w: %w", ErrIO, err)
}
