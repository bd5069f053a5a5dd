package governance

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/google/uuid"
)

// EvidenceRecord is one link of an evidence chain, exactly ADR-0087 D2's
// model. Records are values: copying one copies everything it holds.
//
// PreviousChainHash is "" for the genesis record (null in JSON).
// HashAlgorithm is kept as stored so the verifier can report an unknown
// algorithm instead of refusing to read it; NewRecord and appends use
// HashAlgorithm ("sha256-v1") only.
type EvidenceRecord struct {
	RecordID           uuid.UUID
	RecordType         EvidenceType
	ChainID            uuid.UUID
	OperationID        uuid.NullUUID
	Sequence           int64
	PolicyID           uuid.UUID
	PolicyVersion      string
	PayloadJSON        string
	PayloadDigest      string
	PreviousChainHash  string
	ChainHash          string
	SupersedesRecordID uuid.NullUUID
	CreatedAt          time.Time
	HashAlgorithm      string
}

// ChainHead is where a chain ends: the sequence and chain hash of its last
// record. EmptyHead stands for a chain with no record.
type ChainHead struct {
	Sequence int64
	Hash     string
}

// EmptyHead is the head of a missing chain: the next record is sequence 0
// with no previous hash.
var EmptyHead = ChainHead{Sequence: -1}

// IsEmpty reports whether h is the head of a chain with no record.
func (h ChainHead) IsEmpty() bool { return h.Sequence < 0 }

// Head returns the head a chain has once r is its last record.
func (r EvidenceRecord) Head() ChainHead { return ChainHead{Sequence: r.Sequence, Hash: r.ChainHash} }

// Validate checks the record's shape: a known type, non-nil ids, a
// nonnegative sequence, digest patterns, genesis linkage and a UTC
// microsecond time. It does not recompute hashes (see CheckIntegrity).
func (r EvidenceRecord) Validate() error {
	if err := r.validateFields(); err != nil {
		return err
	}
	if err := checkDigest("payload_digest", r.PayloadDigest); err != nil {
		return err
	}
	if err := checkDigest("chain_hash", r.ChainHash); err != nil {
		return err
	}
	return checkOptionalDigest("previous_chain_hash", r.PreviousChainHash)
}

// validateFields is Validate without the digest checks, for NextRecord,
// which has just computed both digests.
func (r EvidenceRecord) validateFields() error {
	switch {
	case r.RecordID == uuid.Nil:
		return &ValidationError{Field: "record_id", Reason: "is required"}
	case !r.RecordType.Valid():
		return &ValidationError{Field: "record_type", Reason: fmt.Sprintf("unknown type %q", r.RecordType)}
	case r.ChainID == uuid.Nil:
		return &ValidationError{Field: "chain_id", Reason: "is required"}
	case r.Sequence < 0:
		return &ValidationError{Field: "sequence", Reason: "must be >= 0"}
	case r.PolicyID == uuid.Nil:
		return &ValidationError{Field: "policy_id", Reason: "is required"}
	case r.HashAlgorithm == "":
		return &ValidationError{Field: "hash_algorithm", Reason: "is required"}
	case r.CreatedAt.IsZero():
		return &ValidationError{Field: "created_at", Reason: "is required"}
	case r.CreatedAt.Location() != time.UTC || r.CreatedAt.Nanosecond()%1000 != 0:
		return &ValidationError{Field: "created_at", Reason: "must be UTC with at most microsecond precision"}
	}
	return nil
}

// ComputePayloadDigest returns sha256 of the record's payload_json.
func (r EvidenceRecord) ComputePayloadDigest() string {
	return sha256HexString(r.PayloadJSON)
}

// ComputeChainHash returns the sha256 of the canonical JSON of every field
// but chain_hash. It fails only when a text field is not valid UTF-8.
func (r EvidenceRecord) ComputeChainHash() (string, error) {
	bp := chainBufPool.Get().(*[]byte)
	buf, err := r.appendChainInput((*bp)[:0])
	if err != nil {
		chainBufPool.Put(bp)
		return "", err
	}
	sum := sha256.Sum256(buf)
	*bp = buf
	chainBufPool.Put(bp)
	return hexDigest(sum), nil
}

var chainBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// appendChainInput writes the canonical JSON of the thirteen hashed fields.
func (r EvidenceRecord) appendChainInput(dst []byte) ([]byte, error) {
	// NB: appendChainInputOf escapes its three text arguments without
	// checking them (a batch builder passes text it just wrote); here they
	// come from anywhere, so they are checked first, in field order.
	for _, f := range [...]struct{ name, text string }{
		{"payload_digest", r.PayloadDigest}, {"payload_json", r.PayloadJSON}, {"previous_chain_hash", r.PreviousChainHash},
	} {
		if !utf8.ValidString(f.text) {
			return nil, at(&CanonicalError{Reason: "string is not valid UTF-8"}, f.name)
		}
	}
	return appendChainInputOf(dst, &r, r.PayloadJSON, r.PayloadDigest, r.PreviousChainHash)
}

// appendChainInputOf writes r's chain input with payloadJSON, payloadDigest
// and previous in place of the record's own three text fields, which must
// be valid UTF-8 (they are escaped, not checked): NextRecords passes them
// as bytes of the batch it is writing, before they become strings. Keys
// are written in sorted order by hand: this is the hot path of every
// append and verify, and equals Canonical of the same map (tested).
func appendChainInputOf[T ~string | ~[]byte](dst []byte, r *EvidenceRecord, payloadJSON, payloadDigest, previous T) ([]byte, error) {
	dst, err := appendChainInputHead(dst, r, payloadDigest)
	if err != nil {
		return nil, err
	}
	dst = appendEscaped(dst, payloadJSON)
	return appendChainInputTail(dst, r, previous)
}

// appendChainInputHead writes the chain input's fields before the
// payload_json value (chain_id … payload_digest, then the payload's key):
// the payload goes after it, escaped (appendChainInputOf) or as a sealed
// batch escaped it already (SealedBatch.CheckIntegrity).
func appendChainInputHead[T ~string | ~[]byte](dst []byte, r *EvidenceRecord, payloadDigest T) ([]byte, error) {
	var err error
	dst = append(dst, `{"chain_id":"`...)
	dst = AppendUUID(dst, r.ChainID)
	dst = append(dst, `","created_at":"`...)
	dst = AppendTime(dst, r.CreatedAt)
	dst = append(dst, `","hash_algorithm":`...)
	if r.HashAlgorithm == HashAlgorithm {
		dst = append(dst, `"`+HashAlgorithm+`"`...) // NB: plain ASCII, nothing to escape
	} else if dst, err = appendString(dst, r.HashAlgorithm); err != nil {
		return nil, at(err, "hash_algorithm")
	}
	dst = append(dst, `,"operation_id":`...)
	dst = appendNullUUID(dst, r.OperationID)
	dst = append(dst, `,"payload_digest":`...)
	dst = appendEscaped(dst, payloadDigest)
	return append(dst, `,"payload_json":`...), nil
}

// appendChainInputTail writes the chain input's fields after the
// payload_json value (policy_id … supersedes_record_id) and the closing
// brace.
func appendChainInputTail[T ~string | ~[]byte](dst []byte, r *EvidenceRecord, previous T) ([]byte, error) {
	var err error
	dst = append(dst, `,"policy_id":"`...)
	dst = AppendUUID(dst, r.PolicyID)
	dst = append(dst, `","policy_version":`...)
	if dst, err = appendString(dst, r.PolicyVersion); err != nil {
		return nil, at(err, "policy_version")
	}
	dst = append(dst, `,"previous_chain_hash":`...)
	if len(previous) == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendEscaped(dst, previous)
	}
	dst = append(dst, `,"record_id":"`...)
	dst = AppendUUID(dst, r.RecordID)
	dst = append(dst, `","record_type":`...)
	if r.RecordType.Valid() {
		// NB: a known type is a plain ASCII name, nothing to escape.
		dst = append(append(append(dst, '"'), r.RecordType...), '"')
	} else if dst, err = appendString(dst, string(r.RecordType)); err != nil {
		return nil, at(err, "record_type")
	}
	dst = append(dst, `,"sequence":`...)
	dst = strconv.AppendInt(dst, r.Sequence, 10)
	dst = append(dst, `,"supersedes_record_id":`...)
	dst = appendNullUUID(dst, r.SupersedesRecordID)
	return append(dst, '}'), nil
}

// ChainHashInput returns the canonical JSON the chain hash is computed
// over, for inspection and cross-language checks.
func (r EvidenceRecord) ChainHashInput() ([]byte, error) { return r.appendChainInput(nil) }

// CheckIntegrity recomputes both digests and checks that payload_json is
// the canonical encoding of an approved value. It returns an
// *EvidenceIntegrityError naming what failed.
func (r EvidenceRecord) CheckIntegrity() error {
	if err := r.Validate(); err != nil {
		return &EvidenceIntegrityError{RecordID: r.RecordID.String(), Reason: err.Error()}
	}
	if r.HashAlgorithm != HashAlgorithm {
		return &EvidenceIntegrityError{RecordID: r.RecordID.String(), Reason: fmt.Sprintf("unsupported hash algorithm %q", r.HashAlgorithm)}
	}
	if err := checkCanonicalPayload(r.PayloadJSON); err != nil {
		return &EvidenceIntegrityError{RecordID: r.RecordID.String(), Reason: err.Error()}
	}
	payloadOK, chainOK := r.DigestsMatch()
	if !payloadOK {
		return &EvidenceIntegrityError{RecordID: r.RecordID.String(), Reason: "payload_digest does not match payload_json"}
	}
	if !chainOK {
		// NB: DigestsMatch reports an unencodable field as a mismatch; say which.
		if _, err := r.ComputeChainHash(); err != nil {
			return &EvidenceIntegrityError{RecordID: r.RecordID.String(), Reason: err.Error()}
		}
		return &EvidenceIntegrityError{RecordID: r.RecordID.String(), Reason: "chain_hash does not match the record's fields"}
	}
	return nil
}

// checkCanonicalPayload accepts payload_json only if it is a JSON object
// already in canonical form.
func checkCanonicalPayload(payload string) error {
	if len(payload) == 0 || payload[0] != '{' {
		return &ValidationError{Field: "payload_json", Reason: "must be a JSON object"}
	}
	if err := checkCanonical(payload); err != nil {
		return fmt.Errorf("payload_json: %w", err)
	}
	return nil
}

// AppendUUID appends id's canonical text (lower-case, hyphenated, as
// uuid.UUID.String writes it) to dst without allocating.
func AppendUUID(dst []byte, id uuid.UUID) []byte {
	var buf [36]byte
	encodeHex(buf[0:8], id[0:4])
	buf[8] = '-'
	encodeHex(buf[9:13], id[4:6])
	buf[13] = '-'
	encodeHex(buf[14:18], id[6:8])
	buf[18] = '-'
	encodeHex(buf[19:23], id[8:10])
	buf[23] = '-'
	encodeHex(buf[24:], id[10:])
	return append(dst, buf[:]...)
}

// hexPairs[b] is b in two lowercase hex digits.
var hexPairs = func() (t [256][2]byte) {
	const digits = "0123456789abcdef"
	for b := range t {
		t[b] = [2]byte{digits[b>>4], digits[b&15]}
	}
	return t
}()

// encodeHex is hex.Encode (lowercase) a byte at a time instead of a
// nibble at a time: a governed call writes about 40 ids and 24 digests.
func encodeHex(dst, src []byte) {
	_ = dst[2*len(src)-1]
	for i, b := range src {
		p := &hexPairs[b]
		dst[2*i], dst[2*i+1] = p[0], p[1]
	}
}

func appendNullUUID(dst []byte, id uuid.NullUUID) []byte {
	if !id.Valid {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = AppendUUID(dst, id.UUID)
	return append(dst, '"')
}

func sha256HexString(s string) string { return hexDigest(sumString(s)) }

// sumString hashes s in place: sha256.Sum256([]byte(s)) would copy s to
// the heap on every record. Sum256 only reads its input.
func sumString(s string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// hexDigest is the lowercase hex form of sum in one allocation
// (hex.EncodeToString makes two).
func hexDigest(sum [sha256.Size]byte) string {
	var enc [2 * sha256.Size]byte
	encodeHex(enc[:], sum[:])
	return string(enc[:])
}

// DigestsMatch recomputes both digests and reports whether each equals the
// stored one, without allocating: the verifier's hot path.
func (r EvidenceRecord) DigestsMatch() (payloadOK, chainOK bool) {
	if !hexEqual(sumString(r.PayloadJSON), r.PayloadDigest) {
		return false, false
	}
	bp := chainBufPool.Get().(*[]byte)
	defer chainBufPool.Put(bp)
	buf, err := r.appendChainInput((*bp)[:0])
	if err != nil {
		return true, false
	}
	*bp = buf
	return true, hexEqual(sha256.Sum256(buf), r.ChainHash)
}

// hexEqual reports whether digest is the lowercase hex of sum.
func hexEqual(sum [sha256.Size]byte, digest string) bool {
	if len(digest) != 2*sha256.Size {
		return false
	}
	for i, b := range sum {
		p := &hexPairs[b]
		if digest[2*i] != p[0] || digest[2*i+1] != p[1] {
			return false
		}
	}
	return true
}
