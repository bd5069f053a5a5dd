package evidence

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// MemStore is the in-memory reference Store: the full conflict and verifier
// contract, one lock per chain, nothing durable. It also implements
// BatchAppender. The zero value is not usable; call NewMemStore.
//
// Its bookkeeping is shaped for a long-running process that appends a few
// records a call: a chain's records live in fixed-size chunks (a growing
// chain never copies what it holds), and the one global index, of record
// ids, holds no pointer for the garbage collector to follow.
//
// The duplicate chain hash rule needs no index of its own here: a record
// reaches the index check only after its integrity check (step 1), which
// recomputed its chain hash over an input that holds its record id; two
// such records with one chain hash and two record ids would be a SHA-256
// collision, and a record with the same id is refused as a duplicate id
// first, as every backend reports a replay. So a duplicate chain hash is
// refused as a duplicate record id, one map lookup a record instead of
// two on a map that grows with the store.
type MemStore struct {
	mu     sync.Mutex // guards chains and ids, never held while hashing
	chains map[uuid.UUID]*memChain
	ids    map[uuid.UUID]struct{}
}

type memChain struct {
	mu sync.Mutex // serializes appends to this chain
	id uuid.UUID
	// chunks hold the records in order, each chunk memChunk records long
	// but the last; records are never modified in place.
	chunks [][]memRecord
	n      int
}

// memRecord is a stored record in less than half an EvidenceRecord's
// size, with fewer pointers for the collector to follow: the store keeps
// every record in the heap, and a governed call adds six. It leaves out
// what its place in the chain implies (the chain id, the sequence, the
// previous record's hash, the one hash algorithm), keeps the time as
// microseconds and shares the policy pin with the record before it. A
// record that does not compact to exactly itself (a tamper case's) is
// kept whole in full; record() gives back a value equal to the record
// appended, field for field.
type memRecord struct {
	id      uuid.UUID
	op, sup uuid.NullUUID
	typ     uint8 // index in governance.EvidenceTypes
	created int64 // Unix microseconds
	payload string
	digest  string
	hash    string // the chain hash, also of a full record
	pin     *memPin
	full    *governance.EvidenceRecord
}

// memPin is a record's policy pin, shared by the consecutive records that
// have it.
type memPin struct {
	id      uuid.UUID
	version string
}

// memChunk is how many records one chunk of a chain holds.
const memChunk = 64

var (
	_ Store          = (*MemStore)(nil)
	_ BatchAppender  = (*MemStore)(nil)
	_ SealedAppender = (*MemStore)(nil)
)

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{
		chains: make(map[uuid.UUID]*memChain),
		ids:    make(map[uuid.UUID]struct{}),
	}
}

func (s *MemStore) chain(id uuid.UUID, create bool) *memChain {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chains[id]
	if c == nil && create {
		c = &memChain{id: id}
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
	return s.commit(records)
}

// AppendSealed implements SealedAppender.
func (s *MemStore) AppendSealed(ctx context.Context, b *governance.SealedBatch) ([]governance.AppendReceipt, error) {
	records := b.Records()
	if err := CheckSealed(ctx, b); err != nil || len(records) == 0 {
		return nil, err
	}
	return s.commit(records)
}

// commit is steps 2 and 3 and the append, for records that passed step 1.
func (s *MemStore) commit(records []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	c := s.chain(records[0].ChainID, true)
	c.mu.Lock()
	defer c.mu.Unlock()
	s.mu.Lock()
	// Step 2 and the index's update in one probe a record (the index is
	// the store's largest map: a probe is a cache miss): each id is added
	// as it is checked, and taken out again if the batch is refused.
	added, err := s.addIDs(records)
	if err == nil {
		err = CheckBatch(c.head(), records)
	}
	if err != nil {
		for i := range added {
			delete(s.ids, records[i].RecordID)
		}
		s.mu.Unlock()
		return nil, err
	}
	s.mu.Unlock()
	receipts := make([]governance.AppendReceipt, len(records))
	for i := range records {
		receipts[i] = governance.ReceiptFor(records[i])
	}
	c.add(records)
	return receipts, nil
}

// addIDs adds the records' ids to the index, in order, until one is
// stored already: that one is refused as a duplicate id, as before any
// other check. An id that repeats inside the batch is not one the store
// holds: it is left to CheckBatch, which names it as such. It returns how
// many ids it added (the first ones); the caller holds s.mu.
func (s *MemStore) addIDs(records []governance.EvidenceRecord) (added int, err error) {
	for i := range records {
		id := records[i].RecordID
		n := len(s.ids)
		s.ids[id] = struct{}{}
		if len(s.ids) > n {
			continue
		}
		if !idIn(records[:i], id) {
			return i, DuplicateID(records[i])
		}
		// NB: a repeat inside the batch, which CheckBatch reports, unless
		// a later record's id is one the store holds: that comes first.
		for k := i + 1; k < len(records); k++ {
			if _, held := s.ids[records[k].RecordID]; held && !idIn(records[:i], records[k].RecordID) {
				return i, DuplicateID(records[k])
			}
		}
		return i, nil
	}
	return len(records), nil
}

// idIn reports whether id is one of the records' ids.
func idIn(records []governance.EvidenceRecord, id uuid.UUID) bool {
	for j := range records {
		if records[j].RecordID == id {
			return true
		}
	}
	return false
}

// add appends records to the chain's chunks; the caller holds c.mu.
func (c *memChain) add(records []governance.EvidenceRecord) {
	for i := range records {
		if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == memChunk {
			c.chunks = append(c.chunks, make([]memRecord, 0, memChunk))
		}
		last := &c.chunks[len(c.chunks)-1]
		*last = append(*last, c.compact(&records[i]))
		c.n++
	}
}

// compact is r as the chain's next record keeps it.
func (c *memChain) compact(r *governance.EvidenceRecord) memRecord {
	var prevHash string
	var pin *memPin
	if c.n > 0 {
		prev := c.at(c.n - 1)
		prevHash, pin = prev.hash, prev.pin
	}
	typ := slices.Index(governance.EvidenceTypes, r.RecordType)
	created := r.CreatedAt.UnixMicro()
	if r.ChainID != c.id || r.Sequence != int64(c.n) || r.PreviousChainHash != prevHash ||
		r.HashAlgorithm != governance.HashAlgorithm || typ < 0 || typ > math.MaxUint8 ||
		time.UnixMicro(created).UTC() != r.CreatedAt {
		full := *r
		return memRecord{hash: r.ChainHash, full: &full}
	}
	if pin == nil || pin.id != r.PolicyID || pin.version != r.PolicyVersion {
		pin = &memPin{id: r.PolicyID, version: r.PolicyVersion}
	}
	return memRecord{
		id: r.RecordID, op: r.OperationID, sup: r.SupersedesRecordID, typ: uint8(typ), created: created,
		payload: r.PayloadJSON, digest: r.PayloadDigest, hash: r.ChainHash, pin: pin,
	}
}

// at returns the stored record at index i; the caller holds c.mu.
func (c *memChain) at(i int) *memRecord {
	return &c.chunks[i/memChunk][i%memChunk]
}

// record returns the record at index i as it was appended; the caller
// holds c.mu.
func (c *memChain) record(i int) governance.EvidenceRecord {
	m := c.at(i)
	if m.full != nil {
		return *m.full
	}
	var prev string
	if i > 0 {
		prev = c.at(i - 1).hash
	}
	return governance.EvidenceRecord{
		RecordID: m.id, RecordType: governance.EvidenceTypes[m.typ], ChainID: c.id, OperationID: m.op,
		Sequence: int64(i), PolicyID: m.pin.id, PolicyVersion: m.pin.version, PayloadJSON: m.payload,
		PayloadDigest: m.digest, PreviousChainHash: prev, ChainHash: m.hash, SupersedesRecordID: m.sup,
		CreatedAt: time.UnixMicro(m.created).UTC(), HashAlgorithm: governance.HashAlgorithm,
	}
}

func (c *memChain) head() governance.ChainHead {
	if c.n == 0 {
		return governance.EmptyHead
	}
	m := c.at(c.n - 1)
	if m.full != nil {
		return m.full.Head()
	}
	return governance.ChainHead{Sequence: int64(c.n - 1), Hash: m.hash}
}

// copyFrom returns a copy of the chain's records from index start on.
func (c *memChain) copyFrom(start int) []governance.EvidenceRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]governance.EvidenceRecord, 0, max(c.n-start, 0))
	for i := start; i < c.n; i++ {
		out = append(out, c.record(i))
	}
	return out
}

// snapshot returns a copy of the chain's records as of now.
func (s *MemStore) snapshot(id uuid.UUID) []governance.EvidenceRecord {
	c := s.chain(id, false)
	if c == nil {
		return nil
	}
	return c.copyFrom(0)
}

// Read implements Store.
func (s *MemStore) Read(ctx context.Context, chainID uuid.UUID, afterSequence int64) ([]governance.EvidenceRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := s.chain(chainID, false)
	if c == nil {
		return []governance.EvidenceRecord{}, nil
	}
	// NB: clamp before adding one, so afterSequence = MaxInt64 cannot wrap.
	start := int64(0)
	if afterSequence >= 0 {
		start = min(afterSequence, math.MaxInt32-1) + 1
	}
	return c.copyFrom(int(start)), nil
}

// Head implements Store.
func (s *MemStore) Head(ctx context.Context, chainID uuid.UUID) (governance.ChainHead, error) {
	if err := ctx.Err(); err != nil {
		return governance.EmptyHead, err
	}
	c := s.chain(chainID, false)
	if c == nil {
		return governance.EmptyHead, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head(), nil
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
	recs := c.copyFrom(0)
	mutate(&recs[i])
	c.replace(recs)
}

// remove deletes the record at index i, bypassing every check (tamper cases).
func (s *MemStore) remove(chainID uuid.UUID, i int) {
	c := s.chain(chainID, false)
	recs := c.copyFrom(0)
	c.replace(append(recs[:i], recs[i+1:]...))
}

// replace makes recs the chain's records, in new chunks (tamper cases).
func (c *memChain) replace(recs []governance.EvidenceRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks, c.n = nil, 0
	c.add(recs)
}
