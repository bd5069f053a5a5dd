package governance

import (
	"crypto/rand"
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
	payload := spec.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	bp := chainBufPool.Get().(*[]byte)
	defer chainBufPool.Put(bp)
	text, err := AppendCanonical((*bp)[:0], payload)
	if err != nil {
		return EvidenceRecord{}, err
	}
	*bp = text
	if len(text) == 0 || text[0] != '{' {
		return EvidenceRecord{}, &ValidationError{Field: "payload", Reason: "must be an object"}
	}
	created := spec.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	id := spec.RecordID
	if id == uuid.Nil {
		id = newRecordID()
	}
	r := EvidenceRecord{
		RecordID:           id,
		RecordType:         spec.Type,
		ChainID:            spec.ChainID,
		OperationID:        spec.OperationID,
		Sequence:           head.Sequence + 1,
		PolicyID:           spec.PolicyID,
		PolicyVersion:      spec.PolicyVersion,
		PayloadJSON:        string(text),
		PayloadDigest:      SHA256Hex(text),
		PreviousChainHash:  head.Hash,
		SupersedesRecordID: spec.SupersedesRecordID,
		CreatedAt:          created.UTC().Truncate(time.Microsecond),
		HashAlgorithm:      HashAlgorithm,
	}
	if head.IsEmpty() {
		r.Sequence, r.PreviousChainHash = 0, ""
	}
	if r.ChainHash, err = r.ComputeChainHash(); err != nil {
		return EvidenceRecord{}, err
	}
	if err := r.validateFields(); err != nil {
		return EvidenceRecord{}, err
	}
	if err := checkOptionalDigest("previous_chain_hash", r.PreviousChainHash); err != nil {
		return EvidenceRecord{}, err // the head is the caller's
	}
	return r, nil
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
