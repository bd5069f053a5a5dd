package evidence

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// MemStore is the in-memory reference Store: the full conflict and verifier
// contract, one lock per chain, nothing durable. It also implements
// BatchAppender. The zero value is not usable; call NewMemStore.
type MemStore struct {
	mu     sync.Mutex // guards chains and the two indexes, never held while hashing
	chains map[uuid.UUID]*memChain
	ids    map[uuid.UUID]struct{}
	hashes map[string]struct{}
}

type memChain struct {
	mu      sync.Mutex // serializes appends to this chain
	records []governance.EvidenceRecord
}

var (
	_ Store         = (*MemStore)(nil)
	_ BatchAppender = (*MemStore)(nil)
)

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{
		chains: make(map[uuid.UUID]*memChain),
		ids:    make(map[uuid.UUID]struct{}),
		hashes: make(map[string]struct{}),
	}
}

func (s *MemStore) chain(id uuid.UUID, create bool) *memChain {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chains[id]
	if c == nil && create {
		c = &memChain{}
		s.chains[id] = c
	}
	return c
}

// Append implements Store.
func (s *MemStore) Append(ctx context.Context, r governance.EvidenceRecord) (governance.AppendReceipt, error) {
	rcs, err := s.AppendBatch(ctx, []governance.EvidenceRecord{r})
	if err != nil {
		return governance.AppendReceipt{}, err
	}
	return rcs[0], nil
}

// AppendBatch implements BatchAppender: all records or none.
func (s *MemStore) AppendBatch(ctx context.Context, records []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	if err := CheckRecords(ctx, records); err != nil || len(records) == 0 {
		return nil, err
	}
	c := s.chain(records[0].ChainID, true)
	c.mu.Lock()
	defer c.mu.Unlock()
	s.mu.Lock()
	for _, r := range records {
		if _, dup := s.ids[r.RecordID]; dup {
			s.mu.Unlock()
			return nil, DuplicateID(r)
		}
		if _, dup := s.hashes[r.ChainHash]; dup {
			s.mu.Unlock()
			return nil, DuplicateHash(r)
		}
	}
	if err := CheckBatch(c.head(), records); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	receipts := make([]governance.AppendReceipt, len(records))
	for i, r := range records {
		s.ids[r.RecordID] = struct{}{}
		s.hashes[r.ChainHash] = struct{}{}
		receipts[i] = governance.ReceiptFor(r)
	}
	s.mu.Unlock()
	c.records = append(c.records, records...)
	return receipts, nil
}

func (c *memChain) head() governance.ChainHead {
	if len(c.records) == 0 {
		return governance.EmptyHead
	}
	return c.records[len(c.records)-1].Head()
}

// snapshot returns the chain's records as of now. Records are never
// modified in place, so the returned prefix stays valid while appends go on.
func (s *MemStore) snapshot(id uuid.UUID) []governance.EvidenceRecord {
	c := s.chain(id, false)
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.records[:len(c.records):len(c.records)]
}

// Read implements Store.
func (s *MemStore) Read(ctx context.Context, chainID uuid.UUID, afterSequence int64) ([]governance.EvidenceRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	recs := s.snapshot(chainID)
	// NB: compare before adding one, so afterSequence = MaxInt64 cannot wrap.
	if afterSequence >= int64(len(recs))-1 {
		return []governance.EvidenceRecord{}, nil
	}
	start := afterSequence + 1
	if start < 0 {
		start = 0
	}
	return append([]governance.EvidenceRecord(nil), recs[start:]...), nil
}

// Head implements Store.
func (s *MemStore) Head(ctx context.Context, chainID uuid.UUID) (governance.ChainHead, error) {
	if err := ctx.Err(); err != nil {
		return governance.EmptyHead, err
	}
	recs := s.snapshot(chainID)
	if len(recs) == 0 {
		return governance.EmptyHead, nil
	}
	return recs[len(recs)-1].Head(), nil
}

// Verify implements Store.
func (s *MemStore) Verify(ctx context.Context, chainID uuid.UUID, expectedHead string) (governance.VerificationResult, error) {
	if err := ctx.Err(); err != nil {
		return governance.VerificationResult{}, err
	}
	return VerifyRecords(s.snapshot(chainID), expectedHead), nil
}

// tamper replaces the stored record at index i with mutate's result,
// bypassing every check. It exists for the conformance suite's tamper
// cases: an in-memory store has no disk to corrupt.
func (s *MemStore) tamper(chainID uuid.UUID, i int, mutate func(*governance.EvidenceRecord)) {
	c := s.chain(chainID, false)
	c.mu.Lock()
	defer c.mu.Unlock()
	recs := append([]governance.EvidenceRecord(nil), c.records...)
	mutate(&recs[i])
	c.records = recs
}

// remove deletes the record at index i, bypassing every check (tamper cases).
func (s *MemStore) remove(chainID uuid.UUID, i int) {
	c := s.chain(chainID, false)
	c.mu.Lock()
	defer c.mu.Unlock()
	recs := append([]governance.EvidenceRecord(nil), c.records[:i]...)
	c.records = append(recs, c.records[i+1:]...)
}
