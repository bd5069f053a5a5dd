package governance

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
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
	const hexLen = 2 * sha256.Size
	w := batchPool.Get().(*batchWriter)
	defer batchPool.Put(w)
	// text holds head's hash, then for each record its payload, payload
	// digest and chain hash; at[i] is where record i's payload starts.
	text, at, chain := w.text[:0], w.at[:0], w.chain[:0]
	defer func() { w.text, w.at, w.chain = text[:0], at[:0], chain[:0] }()
	if !head.IsEmpty() {
		text = append(text, head.Hash...)
	}
	prevStart, prevEnd := 0, len(text)
	recs := make([]EvidenceRecord, len(specs))
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
			id = newRecordID()
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
		if chain, err = appendChainInputOf(chain[:0], r, text[start:end], text[end:end+hexLen], text[prevStart:prevEnd]); err != nil {
			return nil, err
		}
		text = appendHexSum(text, sha256.Sum256(chain))
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
	prev := all[:at0(at, len(all))]
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

// at0 is where the first record's payload starts (after head's hash), or
// n for an empty batch.
func at0(at []int, n int) int {
	if len(at) == 0 {
		return n
	}
	return at[0]
}

// batchWriter is NextRecords' scratch space, kept between calls so a
// governed call's records are written without growing a buffer.
type batchWriter struct {
	text, chain []byte
	at          []int
}

var batchPool = sync.Pool{New: func() any {
	return &batchWriter{text: make([]byte, 0, 4096), chain: make([]byte, 0, 2048), at: make([]int, 0, 8)}
}}

// appendHexSum appends the lowercase hex of sum.
func appendHexSum(dst []byte, sum [sha256.Size]byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, 2*sha256.Size)...)
	hex.Encode(dst[n:], sum[:])
	return dst
}

// newRecordID is uuid.New (version 4, from crypto/rand) without its heap
// allocation: every record of every governed call takes one.
func newRecordID() uuid.UUID {
	var id uuid.UUID
	_, _ = rand.Read(id[:])   // crypto/rand.Read never fails; it crashes the program instead
	id[6] = id[6]&0x0f | 0x40 // version 4
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	return id
}
