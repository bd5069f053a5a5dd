package governance

import (
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/google/uuid"
)

// RecordSpec is what a producer says about a new record; NextRecord fills in
// the chain position and the digests.
type RecordSpec struct {
	// RecordID defaults to a new random UUID.
	RecordID    uuid.UUID
	Type        EvidenceType
	ChainID     uuid.UUID
	OperationID uuid.NullUUID
	PolicyID    uuid.UUID
	// PolicyVersion is the exact version pinned by the operation.
	PolicyVersion string
	// Payload is an approved value (usually map[string]any) encoded into
	// payload_json canonically. nil means an empty object.
	Payload            any
	SupersedesRecordID uuid.NullUUID
	// CreatedAt defaults to the current time; it is normalized to UTC µs.
	CreatedAt time.Time
}

// NextRecord builds the record that follows head on its chain: sequence
// head+1, previous hash head's hash (none for EmptyHead), canonical payload,
// payload digest and chain hash. The result passes CheckIntegrity.
func NextRecord(head ChainHead, spec RecordSpec) (EvidenceRecord, error) {
	recs, err := NextRecords(head, []RecordSpec{spec})
	if err != nil {
		return EvidenceRecord{}, err
	}
	return recs[0], nil
}

// NextRecords builds the records of specs as consecutive links after head,
// each as NextRecord would (the same bytes, the same checks), in one pass
// over one pooled buffer: every payload is encoded once and escaped once
// into its chain input, every text is hashed once, and the payloads and
// digests of the batch become one string, which the records share.
func NextRecords(head ChainHead, specs []RecordSpec) ([]EvidenceRecord, error) {
	w := batchPool.Get().(*batchWriter)
	defer w.release()
	return w.build(head, specs, nil)
}

// SealRecords is NextRecords for a batch on its way to a store: the batch
// keeps each record as built and the chain input its builder wrote, so
// that the store's integrity check (ADR-0087 D3) recomputes both hashes
// over the builder's text instead of encoding every record a second time
// (SealedBatch.CheckIntegrity). Release the batch once it is appended.
func SealRecords(head ChainHead, specs []RecordSpec) (*SealedBatch, error) {
	return SealRecordsInto(nil, head, specs)
}

// SealRecordsInto is SealRecords writing the batch's records into dst's
// storage when it has room for them (a caller's buffer, reused from one
// batch to the next: a governed call's records are a few hundred bytes
// each), otherwise into a new slice.
func SealRecordsInto(dst []EvidenceRecord, head ChainHead, specs []RecordSpec) (*SealedBatch, error) {
	w := batchPool.Get().(*batchWriter)
	recs, err := w.build(head, specs, dst)
	if err != nil {
		w.release()
		return nil, err
	}
	w.sealedAs = append(w.sealedAs[:0], recs...)
	w.sealed = SealedBatch{recs: recs, w: w}
	return &w.sealed, nil
}

// SealedBatch is a batch of records as SealRecords built them, with what
// its builder wrote: each record as built and the chain input its chain
// hash was computed over, which the canonical encoder wrote from the
// record's fields. Only SealRecords makes one.
type SealedBatch struct {
	recs []EvidenceRecord
	w    *batchWriter
}

// Records returns the batch's records; they belong to the caller.
// Changing one is allowed and is caught by CheckIntegrity as it would be
// on any record.
func (b *SealedBatch) Records() []EvidenceRecord { return b.recs }

// CheckIntegrity is EvidenceRecord.CheckIntegrity for every record of the
// batch, with the same result and the same error, at less cost: a record
// still equal, field for field, to the one its builder wrote is checked
// on the builder's own text instead of a second encoding of its fields.
// Both hashes are recomputed all the same (ADR-0087 D3): the payload
// digest over payload_json, the chain hash over the chain input the
// builder wrote from those fields (the canonical encoder's, fuzzed
// against the reference: FuzzNextRecords_SameAsTheReference). Any record
// that differs from what its builder wrote gets the full check.
func (b *SealedBatch) CheckIntegrity() error {
	for i := range b.recs {
		if b.checkSealed(i) {
			continue
		}
		// NB: the full check names what failed, exactly as for any record.
		if err := b.recs[i].CheckIntegrity(); err != nil {
			return err
		}
	}
	return nil
}

// checkSealed reports whether record i passes the integrity check on what
// its builder wrote; false means "check it in full".
func (b *SealedBatch) checkSealed(i int) bool {
	r, w := &b.recs[i], b.w
	if *r != w.sealedAs[i] {
		return false
	}
	return hexEqual(sumString(r.PayloadJSON), r.PayloadDigest) &&
		hexEqual(sha256.Sum256(w.chain[w.chainAt[i]:w.chainAt[i+1]]), r.ChainHash)
}

// Receipts returns the receipts of the batch's records once committed,
// in a slice of the batch's own, valid until Release: a SealedAppender
// returns them without allocating.
func (b *SealedBatch) Receipts() []AppendReceipt {
	w := b.w
	w.receipts = w.receipts[:0]
	for i := range b.recs {
		w.receipts = append(w.receipts, ReceiptFor(b.recs[i]))
	}
	return w.receipts
}

// Release returns the batch's buffers for reuse; the records stay the
// caller's. The batch must not be used after.
func (b *SealedBatch) Release() {
	if w := b.w; w != nil {
		b.recs, b.w = nil, nil
		w.release()
	}
}

// build writes the records of specs after head (NextRecords), into dst
// when it has room.
func (w *batchWriter) build(head ChainHead, specs []RecordSpec, dst []EvidenceRecord) ([]EvidenceRecord, error) {
	const hexLen = 2 * sha256.Size
	// text holds for each record its payload, payload digest and chain
	// hash; at[i] is where record i's payload starts. The first record's
	// previous hash is head's own string (a store keeps every batch's
	// text: a copy of it in each would be kept too).
	// chain holds the records' chain inputs, record i's from chainAt[i]
	// to chainAt[i+1] (SealedBatch.CheckIntegrity hashes them again).
	text, at, chain, chainAt := w.text[:0], w.at[:0], w.chain[:0], w.chainAt[:0]
	defer func() { w.text, w.at, w.chain, w.chainAt = text, at, chain, chainAt }()
	prevStart, prevEnd := 0, 0
	recs := dst[:0]
	if cap(recs) < len(specs) {
		recs = make([]EvidenceRecord, len(specs))
	}
	recs = recs[:len(specs)]
	chainAt = append(chainAt, 0)
	for i, spec := range specs {
		payload := spec.Payload
		if payload == nil {
			payload = map[string]any{}
		}
		start := len(text)
		at = append(at, start)
		next, err := AppendCanonical(text, payload)
		if err != nil {
			return nil, err
		}
		text = next
		if text[start] != '{' {
			return nil, &ValidationError{Field: "payload", Reason: "must be an object"}
		}
		end := len(text)
		text = appendHexSum(text, sha256.Sum256(text[start:end]))
		created := spec.CreatedAt
		if created.IsZero() {
			created = time.Now()
		}
		id := spec.RecordID
		if id == uuid.Nil {
			id = w.ids.next()
		}
		r := &recs[i]
		*r = EvidenceRecord{
			RecordID: id, RecordType: spec.Type, ChainID: spec.ChainID, OperationID: spec.OperationID,
			Sequence: head.Sequence + 1 + int64(i), PolicyID: spec.PolicyID, PolicyVersion: spec.PolicyVersion,
			SupersedesRecordID: spec.SupersedesRecordID, CreatedAt: created.UTC().Truncate(time.Microsecond),
			HashAlgorithm: HashAlgorithm,
		}
		if head.IsEmpty() {
			r.Sequence = int64(i)
		}
		if chain, err = appendChainInputHead(chain, r, text[end:end+hexLen]); err != nil {
			return nil, err
		}
		chain = appendEscaped(chain, text[start:end])
		if i == 0 {
			chain, err = appendChainInputTail(chain, r, r.previousOf(head))
		} else {
			chain, err = appendChainInputTail(chain, r, text[prevStart:prevEnd])
		}
		if err != nil {
			return nil, err
		}
		chainAt = append(chainAt, len(chain))
		text = appendHexSum(text, sha256.Sum256(chain[chainAt[i]:]))
		if err := r.validateFields(); err != nil {
			return nil, err
		}
		if i == 0 {
			// The head is the caller's: its hash must be a digest.
			if err := checkOptionalDigest("previous_chain_hash", r.previousOf(head)); err != nil {
				return nil, err
			}
		}
		prevStart, prevEnd = end+hexLen, end+2*hexLen
	}
	all := string(text) // NB: the one allocation of the batch's texts
	prev := head.Hash
	if head.IsEmpty() {
		prev = ""
	}
	for i := range recs {
		p := at[i]
		end := len(all) - 2*hexLen
		if i+1 < len(at) {
			end = at[i+1] - 2*hexLen
		}
		recs[i].PayloadJSON = all[p:end]
		recs[i].PayloadDigest = all[end : end+hexLen]
		recs[i].ChainHash = all[end+hexLen : end+2*hexLen]
		recs[i].PreviousChainHash, prev = prev, recs[i].ChainHash
	}
	return recs, nil
}

// previousOf is the previous chain hash of the record after head.
func (r *EvidenceRecord) previousOf(head ChainHead) string {
	if head.IsEmpty() {
		return ""
	}
	return head.Hash
}

// batchWriter is NextRecords' scratch space, kept between calls so a
// governed call's records are written without growing a buffer; a
// SealedBatch holds it until released.
type batchWriter struct {
	text, chain []byte
	at, chainAt []int
	ids         recordIDs
	// sealedAs are the records as built, receipts their receipts
	// (SealedBatch).
	sealedAs []EvidenceRecord
	receipts []AppendReceipt
	sealed   SealedBatch
}

func (w *batchWriter) release() {
	clear(w.sealedAs) // NB: the texts are the caller's; keep no reference
	clear(w.receipts)
	w.sealedAs, w.receipts = w.sealedAs[:0], w.receipts[:0]
	w.sealed = SealedBatch{}
	batchPool.Put(w)
}

var batchPool = sync.Pool{New: func() any {
	return &batchWriter{
		text: make([]byte, 0, 4096), chain: make([]byte, 0, 8192),
		at: make([]int, 0, 8), chainAt: make([]int, 0, 9), sealedAs: make([]EvidenceRecord, 0, 8),
		receipts: make([]AppendReceipt, 0, 8),
	}
}}

// appendHexSum appends the lowercase hex of sum.
func appendHexSum(dst []byte, sum [sha256.Size]byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, 2*sha256.Size)...)
	encodeHex(dst[n:], sum[:])
	return dst
}

// recordIDs hands out new record ids (uuid.New: version 4, from
// crypto/rand) without uuid.New's heap allocation, reading the random
// bytes of several ids at a time: a governed call takes six, and each
// read is a call into the generator. A batch writer keeps its ids'
// random bytes from one batch to the next, as uuid's own random pool
// would (record ids are identifiers, not secrets).
type recordIDs struct {
	random [32 * 16]byte
	left   int // ids not yet handed out at the end of random
}

func (r *recordIDs) next() uuid.UUID {
	if r.left == 0 {
		_, _ = rand.Read(r.random[:]) // crypto/rand.Read never fails; it crashes the program instead
		r.left = len(r.random) / 16
	}
	r.left--
	var id uuid.UUID
	copy(id[:], r.random[16*r.left:])
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	return id
}
