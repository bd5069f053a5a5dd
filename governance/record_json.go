package governance

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
)

// RecordFields lists the fourteen members of a record's JSON form, in the
// order of ADR-0087 D2 and of the reference chain.jsonl. A record line
// holds exactly these, each once; absent values are written null.
var RecordFields = []string{
	"record_id", "record_type", "chain_id", "operation_id", "sequence", "policy_id", "policy_version",
	"payload_json", "payload_digest", "previous_chain_hash", "supersedes_record_id", "created_at",
	"hash_algorithm", "chain_hash",
}

// recordJSON is the wire form MarshalJSON writes, fields in RecordFields
// order.
type recordJSON struct {
	RecordID           uuid.UUID     `json:"record_id"`
	RecordType         EvidenceType  `json:"record_type"`
	ChainID            uuid.UUID     `json:"chain_id"`
	OperationID        uuid.NullUUID `json:"operation_id"`
	Sequence           int64         `json:"sequence"`
	PolicyID           uuid.UUID     `json:"policy_id"`
	PolicyVersion      string        `json:"policy_version"`
	PayloadJSON        string        `json:"payload_json"`
	PayloadDigest      string        `json:"payload_digest"`
	PreviousChainHash  *string       `json:"previous_chain_hash"`
	SupersedesRecordID uuid.NullUUID `json:"supersedes_record_id"`
	CreatedAt          string        `json:"created_at"`
	HashAlgorithm      string        `json:"hash_algorithm"`
	ChainHash          string        `json:"chain_hash"`
}

// MarshalJSON writes the record with null for absent values and created_at
// in TimeLayout, without HTML escaping.
func (r EvidenceRecord) MarshalJSON() ([]byte, error) {
	w := recordJSON{
		RecordID: r.RecordID, RecordType: r.RecordType, ChainID: r.ChainID, OperationID: r.OperationID,
		Sequence: r.Sequence, PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion, PayloadJSON: r.PayloadJSON,
		PayloadDigest: r.PayloadDigest, SupersedesRecordID: r.SupersedesRecordID,
		CreatedAt: FormatTime(r.CreatedAt), HashAlgorithm: r.HashAlgorithm, ChainHash: r.ChainHash,
	}
	if r.PreviousChainHash != "" {
		p := r.PreviousChainHash
		w.PreviousChainHash = &p
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a record strictly; see ParseRecordJSON.
func (r *EvidenceRecord) UnmarshalJSON(b []byte) error {
	rec, err := ParseRecordJSON(b)
	if err != nil {
		return err
	}
	*r = rec
	return nil
}

// ParseRecordJSON reads one record the way every other JSON reader would
// see it, or refuses it with a *ValidationError naming the field: exactly
// the keys of RecordFields (spelled exactly, each once, none missing: nulls
// are explicit), ids as canonical lower-case UUIDs, sequence as a canonical
// nonnegative integer, created_at exactly in TimeLayout, digests as 64
// lowercase hex, and payload_json the canonical JSON of an object. Nothing
// is normalised. Insignificant whitespace, member order and string escapes
// are free, as they are for every reader. An unknown hash_algorithm is kept
// so the verifier can report it.
func ParseRecordJSON(b []byte) (EvidenceRecord, error) {
	o, err := readObject(b, "record", RecordFields)
	if err != nil {
		return EvidenceRecord{}, err
	}
	var r EvidenceRecord
	if r.RecordID, err = o.uuid("record_id"); err != nil {
		return EvidenceRecord{}, err
	}
	typ, err := o.str("record_type")
	if err != nil {
		return EvidenceRecord{}, err
	}
	if r.RecordType = EvidenceType(typ); !r.RecordType.Valid() {
		return EvidenceRecord{}, &ValidationError{Field: "record_type", Reason: "unknown type " + quoteForError(typ)}
	}
	if r.ChainID, err = o.uuid("chain_id"); err != nil {
		return EvidenceRecord{}, err
	}
	if r.OperationID, err = o.nullUUID("operation_id"); err != nil {
		return EvidenceRecord{}, err
	}
	if r.Sequence, err = o.count("sequence"); err != nil {
		return EvidenceRecord{}, err
	}
	if r.PolicyID, err = o.uuid("policy_id"); err != nil {
		return EvidenceRecord{}, err
	}
	if r.PolicyVersion, err = o.str("policy_version"); err != nil {
		return EvidenceRecord{}, err
	}
	if r.PayloadJSON, err = o.str("payload_json"); err != nil {
		return EvidenceRecord{}, err
	}
	if err := checkCanonicalPayload(r.PayloadJSON); err != nil {
		var ce *CanonicalError
		if errors.As(err, &ce) {
			err = &ValidationError{Field: "payload_json", Reason: "at " + ce.Path + ": " + ce.Reason}
		}
		return EvidenceRecord{}, err
	}
	if r.PayloadDigest, err = o.digest("payload_digest"); err != nil {
		return EvidenceRecord{}, err
	}
	if !o.isNull("previous_chain_hash") {
		if r.PreviousChainHash, err = o.digest("previous_chain_hash"); err != nil {
			return EvidenceRecord{}, err
		}
	}
	if r.SupersedesRecordID, err = o.nullUUID("supersedes_record_id"); err != nil {
		return EvidenceRecord{}, err
	}
	if r.CreatedAt, err = o.timestamp("created_at"); err != nil {
		return EvidenceRecord{}, err
	}
	if r.HashAlgorithm, err = o.str("hash_algorithm"); err != nil {
		return EvidenceRecord{}, err
	}
	if r.ChainHash, err = o.digest("chain_hash"); err != nil {
		return EvidenceRecord{}, err
	}
	if err := r.Validate(); err != nil {
		return EvidenceRecord{}, err
	}
	return r, nil
}
