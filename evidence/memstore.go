package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
// records a call and keeps them all: a chain's records are encoded into
// the chain's own arena of byte chunks (memChain), and the one global
// index, of record ids, holds no pointer for the garbage collector to
// follow.
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

// memChain is one chain's records, encoded one after another into the
// chain's arena (memEncode): byte chunks that hold no pointer for the
// garbage collector and are never moved or rewritten. A governed call
// adds six records that the store keeps for the life of the process, so
// what a record costs in memory is paid on every call: as objects (a
// record struct, its texts, their hex digests) it was 3.5 KB a call, in
// the arena about half that (docs/performance.md).
type memChain struct {
	mu sync.Mutex // serializes appends to this chain
	id uuid.UUID
	// chunks is the arena; recs[i] is where record i starts in it
	// (memRef). A chunk holds whole records only.
	chunks [][]byte
	recs   []memRef
	// digests are where the arena holds the digests payloads refer to
	// (appendPayload).
	digests []memRef
	// pins are the policy pins along the chain: pins[k] is the pin of
	// the records from pins[k].from to the next run's start.
	pins []memPin
	// full holds whole the records that the encoding could not give back
	// exactly (a tamper case's: wrong position, an unknown type, a hash
	// that is not lowercase hex); their recs entry is memFull.
	full map[int]*governance.EvidenceRecord
	// headHash is the last record's chain hash as appended (Head is asked
	// before every batch; this answers it without formatting); lastOp and
	// lastTime are its operation id and time (Unix µs), which the next
	// record may share.
	headHash string
	lastOp   uuid.NullUUID
	lastTime int64
}

// memRef locates a record in its chain's arena: the chunk in the high 32
// bits, the offset in the low 32.
type memRef uint64

// memFull marks a record kept whole (memChain.full).
const memFull = memRef(math.MaxUint64)

// memPin is the policy pin of the chain's records from index from on.
type memPin struct {
	from    int
	id      uuid.UUID
	version string
}

// A record in the arena (memEncode): a flag byte, the record type's index
// in governance.EvidenceTypes, the record id, then what differs from the
// record before it (the operation id and the time, which the records of
// one batch share), the supersedes id when set, the payload digest and
// chain hash as 32 bytes each, and the payload's length (4 bytes) and
// text, in its short form (mempayload.go) when it has one. Left
// out, because the record's place gives them back: chain id, sequence,
// previous hash, hash algorithm, and the policy pin (memChain.pins).
const (
	memHasOp        = 1 << iota // the record has an operation id
	memOwnOp                    // … stored here, not the previous record's
	memOwnTime                  // the time is stored here, not the previous record's
	memHasSup                   // a supersedes id is stored
	memShortPayload             // the payload is in its short form (appendPayload)
	memFixedSize    = 2 + 16 + 2*sha256.Size
	// memShareRun bounds a run of records that share the operation id or
	// time of the one before.
	memShareRun = 16
)

// memChunkMin and memChunkMax bound an arena chunk's size: a chain's
// chunks double from the first to the largest, so a short chain (a task of
// a few calls) keeps little slack and a long one few chunks; a record
// longer than the largest gets a chunk of its own size.
const (
	memChunkMin = 1 << 10
	memChunkMax = 16 << 10
)

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
	if err := s.commit(records); err != nil {
		return nil, err
	}
	receipts := make([]governance.AppendReceipt, len(records))
	for i := range records {
		receipts[i] = governance.ReceiptFor(records[i])
	}
	return receipts, nil
}

// AppendSealed implements SealedAppender.
func (s *MemStore) AppendSealed(ctx context.Context, b *governance.SealedBatch) ([]governance.AppendReceipt, error) {
	records := b.Records()
	if err := CheckSealed(ctx, b); err != nil || len(records) == 0 {
		return nil, err
	}
	if err := s.commit(records); err != nil {
		return nil, err
	}
	return b.Receipts(), nil
}

// commit is steps 2 and 3 and the append, for records that passed step 1.
func (s *MemStore) commit(records []governance.EvidenceRecord) error {
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
		return err
	}
	s.mu.Unlock()
	c.add(records)
	return nil
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

// add appends records to the chain; the caller holds c.mu.
func (c *memChain) add(records []governance.EvidenceRecord) {
	for i := range records {
		r := &records[i]
		if !c.encodes(r) {
			if c.full == nil {
				c.full = make(map[int]*governance.EvidenceRecord)
			}
			whole := *r
			c.full[len(c.recs)] = &whole
			c.recs = append(c.recs, memFull)
		} else {
			c.recs = append(c.recs, c.encode(r))
		}
		c.headHash, c.lastOp, c.lastTime = r.ChainHash, r.OperationID, r.CreatedAt.UnixMicro()
	}
}

// encodes reports whether the arena's encoding of r, as the chain's next
// record, gives r back exactly: its chain, sequence and previous hash as
// the chain implies them, sha256-v1, a known type, lowercase hex digests
// (stored as bytes) and a time that microseconds give back. Records that
// passed the integrity check and the position check do, but for the time
// of one built by hand (any location, not only UTC, is a valid
// time.Time); the tamper cases' records need not.
func (c *memChain) encodes(r *governance.EvidenceRecord) bool {
	return r.ChainID == c.id && r.Sequence == int64(len(c.recs)) && r.PreviousChainHash == c.headHash &&
		r.HashAlgorithm == governance.HashAlgorithm && r.RecordType.Valid() &&
		governance.IsDigest(r.PayloadDigest) && governance.IsDigest(r.ChainHash) &&
		time.UnixMicro(r.CreatedAt.UnixMicro()).UTC() == r.CreatedAt && len(r.PayloadJSON) < math.MaxInt32
}

// encode writes r at the end of the chain's arena and returns where.
func (c *memChain) encode(r *governance.EvidenceRecord) memRef {
	n := len(c.recs)
	// NB: every memShareRun-th record stores its operation id and time
	// whatever the record before holds, which bounds how far back
	// opAndTime looks.
	own := n%memShareRun == 0
	prevOp, prevTime := c.lastOp, c.lastTime
	if p := len(c.pins); p == 0 || c.pins[p-1].id != r.PolicyID || c.pins[p-1].version != r.PolicyVersion {
		c.pins = append(c.pins, memPin{from: n, id: r.PolicyID, version: r.PolicyVersion})
	}
	created := r.CreatedAt.UnixMicro()
	var flags byte
	size := memFixedSize + 4 + len(r.PayloadJSON) // NB: a short form is never longer
	if r.OperationID.Valid {
		flags |= memHasOp
		if own || r.OperationID != prevOp {
			flags |= memOwnOp
			size += 16
		}
	}
	if own || created != prevTime {
		flags |= memOwnTime
		size += 8
	}
	if r.SupersedesRecordID.Valid {
		flags |= memHasSup
		size += 16
	}
	dst, ref := c.reserve(size)
	dst = append(dst, flags, byte(slices.Index(governance.EvidenceTypes, r.RecordType)))
	dst = append(dst, r.RecordID[:]...)
	if flags&memOwnOp != 0 {
		dst = append(dst, r.OperationID.UUID[:]...)
	}
	if flags&memOwnTime != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(created))
	}
	if flags&memHasSup != 0 {
		dst = append(dst, r.SupersedesRecordID.UUID[:]...)
	}
	dst = appendDigestBytes(dst, r.PayloadDigest)
	dst = appendDigestBytes(dst, r.ChainHash)
	// NB: the payload's length goes before it, known once it is written.
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var short bool
	if dst, short = c.appendPayload(dst, r.PayloadJSON, ref+memRef(len(dst))); short {
		dst[0] |= memShortPayload
	} else {
		dst = append(dst, r.PayloadJSON...)
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	last := &c.chunks[len(c.chunks)-1]
	*last = (*last)[:len(*last)+len(dst)]
	return ref
}

// reserve returns an empty slice with room for size bytes at the end of
// the arena, and where it starts; encode writes into it and then extends
// the chunk by what it wrote.
func (c *memChain) reserve(size int) ([]byte, memRef) {
	k := len(c.chunks) - 1
	if k < 0 || cap(c.chunks[k])-len(c.chunks[k]) < size {
		n := memChunkMin
		if k >= 0 {
			n = min(2*cap(c.chunks[k]), memChunkMax)
		}
		c.chunks = append(c.chunks, make([]byte, 0, max(n, size)))
		k++
	}
	at := len(c.chunks[k])
	return c.chunks[k][at:at], memRef(uint64(k)<<32 | uint64(at))
}

// appendDigestBytes appends the 32 bytes a lowercase hex digest stands
// for (governance.IsDigest checked it).
func appendDigestBytes(dst []byte, digest string) []byte {
	var text [2 * sha256.Size]byte
	copy(text[:], digest)
	n := len(dst)
	dst = append(dst, make([]byte, sha256.Size)...)
	_, _ = hex.Decode(dst[n:], text[:]) // NB: cannot fail on a checked digest
	return dst
}

// bytesAt is the arena from ref on.
func (c *memChain) bytesAt(ref memRef) []byte {
	chunk := c.chunks[ref>>32]
	return chunk[uint32(ref):cap(chunk)] // NB: a record being written is past len
}

// opAndTime returns record i's operation id and time (Unix µs), which a
// record may take from the one before it; the caller holds c.mu.
func (c *memChain) opAndTime(i int) (uuid.NullUUID, int64) {
	var op uuid.NullUUID
	opKnown, timeKnown := false, false
	var created int64
	for ; i >= 0 && !(opKnown && timeKnown); i-- {
		if c.recs[i] == memFull {
			r := c.full[i]
			if !opKnown {
				op, opKnown = r.OperationID, true
			}
			if !timeKnown {
				created, timeKnown = r.CreatedAt.UnixMicro(), true
			}
			continue
		}
		b := c.bytesAt(c.recs[i])
		flags, at := b[0], 2+16
		if !opKnown && (flags&memHasOp == 0 || flags&memOwnOp != 0) {
			opKnown = true
			if flags&memHasOp != 0 {
				op = uuid.NullUUID{UUID: uuid.UUID(b[at : at+16]), Valid: true}
			}
		}
		if flags&memOwnOp != 0 {
			at += 16
		}
		if !timeKnown && flags&memOwnTime != 0 {
			created, timeKnown = int64(binary.LittleEndian.Uint64(b[at:])), true
		}
	}
	return op, created
}

// decoder reads a chain's records in order from index start, carrying
// what a record takes from the one before it; the caller holds c.mu.
type memDecoder struct {
	c        *memChain
	i        int
	op       uuid.NullUUID
	created  int64
	prevHash string
	pin      int // index in c.pins of record i's pin
}

func (c *memChain) decoderAt(start int) *memDecoder {
	d := &memDecoder{c: c, i: start}
	if start > 0 {
		d.op, d.created = c.opAndTime(start - 1)
		d.prevHash = c.hashAt(start - 1)
	}
	d.pin, _ = slices.BinarySearchFunc(c.pins, start, func(p memPin, i int) int { return p.from - i })
	if d.pin == len(c.pins) || c.pins[d.pin].from > start {
		d.pin--
	}
	return d
}

// next returns the next record as it was appended.
func (d *memDecoder) next() governance.EvidenceRecord {
	c, i := d.c, d.i
	d.i++
	for d.pin+1 < len(c.pins) && c.pins[d.pin+1].from <= i {
		d.pin++
	}
	if c.recs[i] == memFull {
		r := *c.full[i]
		d.op, d.created, d.prevHash = r.OperationID, r.CreatedAt.UnixMicro(), r.ChainHash
		return r
	}
	b := c.bytesAt(c.recs[i])
	flags := b[0]
	r := governance.EvidenceRecord{
		RecordType: governance.EvidenceTypes[b[1]], ChainID: c.id, Sequence: int64(i),
		PreviousChainHash: d.prevHash, HashAlgorithm: governance.HashAlgorithm,
	}
	r.RecordID = uuid.UUID(b[2:18])
	b = b[18:]
	if flags&memHasOp == 0 {
		d.op = uuid.NullUUID{}
	} else if flags&memOwnOp != 0 {
		d.op = uuid.NullUUID{UUID: uuid.UUID(b[:16]), Valid: true}
		b = b[16:]
	}
	r.OperationID = d.op
	if flags&memOwnTime != 0 {
		d.created = int64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	r.CreatedAt = time.UnixMicro(d.created).UTC()
	if flags&memHasSup != 0 {
		r.SupersedesRecordID = uuid.NullUUID{UUID: uuid.UUID(b[:16]), Valid: true}
		b = b[16:]
	}
	pin := &c.pins[d.pin]
	r.PolicyID, r.PolicyVersion = pin.id, pin.version
	n := binary.LittleEndian.Uint32(b[2*sha256.Size:])
	enc := b[2*sha256.Size+4 : 2*sha256.Size+4+int(n)]
	size := len(enc)
	if flags&memShortPayload != 0 {
		size = c.payloadLen(enc)
	}
	// NB: one string for the record's three texts.
	text := make([]byte, 0, size+4*sha256.Size)
	if flags&memShortPayload != 0 {
		text = c.expandPayload(text, enc)
	} else {
		text = append(text, enc...)
	}
	payload := text[:size]
	text = hex.AppendEncode(text, b[:sha256.Size])
	text = hex.AppendEncode(text, b[sha256.Size:2*sha256.Size])
	all := string(text)
	r.PayloadJSON = all[:len(payload)]
	r.PayloadDigest = all[len(payload) : len(payload)+2*sha256.Size]
	r.ChainHash = all[len(payload)+2*sha256.Size:]
	d.prevHash = r.ChainHash
	return r
}

// hashAt returns record i's chain hash; the caller holds c.mu.
func (c *memChain) hashAt(i int) string {
	if i == len(c.recs)-1 {
		return c.headHash
	}
	if c.recs[i] == memFull {
		return c.full[i].ChainHash
	}
	b := c.bytesAt(c.recs[i])
	at := 2 + 16 + sha256.Size // NB: after the payload digest
	if b[0]&memOwnOp != 0 {
		at += 16
	}
	if b[0]&memOwnTime != 0 {
		at += 8
	}
	if b[0]&memHasSup != 0 {
		at += 16
	}
	return hex.EncodeToString(b[at : at+sha256.Size])
}

func (c *memChain) head() governance.ChainHead {
	if len(c.recs) == 0 {
		return governance.EmptyHead
	}
	return governance.ChainHead{Sequence: int64(len(c.recs) - 1), Hash: c.headHash}
}

// copyFrom returns a copy of the chain's records from index start on.
func (c *memChain) copyFrom(start int) []governance.EvidenceRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.recs)
	out := make([]governance.EvidenceRecord, 0, max(n-start, 0))
	if start >= n {
		return out
	}
	d := c.decoderAt(start)
	for range n - start {
		out = append(out, d.next())
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

// replace makes recs the chain's records, in a new arena (tamper cases).
func (c *memChain) replace(recs []governance.EvidenceRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks, c.recs, c.pins, c.full, c.digests = nil, nil, nil, nil, nil
	c.headHash, c.lastOp, c.lastTime = "", uuid.NullUUID{}, 0
	c.add(recs)
}
