package pebblestore

import (
	"encoding/binary"
	"errors"
	"strings"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Record value, format 1. Every field of the record is stored, including
// chain id and sequence (also in the key), so a value moved under another
// key is caught by the verifier as a broken link rather than silently
// re-labelled:
//
//	[0]       format version (1)
//	[1:17]    record_id
//	[17:33]   chain_id
//	[33:41]   sequence, int64 big-endian
//	[41:57]   policy_id
//	[57]      flags: bit 0 operation_id present, bit 1 supersedes_record_id present
//	[58:74]   operation_id (zeros when absent)
//	[74:90]   supersedes_record_id (zeros when absent)
//	[90:98]   created_at Unix microseconds, int64 big-endian (records are
//	          UTC with microsecond precision; finer digits would be bytes
//	          the chain hash does not cover)
//	then uvarint length + bytes of: record_type, policy_version,
//	hash_algorithm, previous_chain_hash ("" for genesis), payload_digest,
//	chain_hash, payload_json
//
// Why binary and not JSON? Verify decodes every record; a JSON decode costs
// several times the two SHA-256 the check needs, and the 400k records/s
// target leaves ~2.5µs per record. Decoding here is one allocation (the
// value copied into a string all text fields share).
const (
	codecVersion  = 1
	fixedLen      = 98
	flagOperation = 1 << 0
	flagSupersede = 1 << 1
	digestLen     = 64 // hex sha256
)

var (
	// errUnknownCodec: the first byte names a format this package does not
	// know; Verify reports it as UNSUPPORTED_ALGORITHM.
	errUnknownCodec = errors.New("unknown record format version")
	// errMalformed: the value does not decode; Verify reports it as
	// CONTENT_MISMATCH.
	errMalformed = errors.New("malformed record value")
)

// encodedLen is the length encodeRecord appends.
func encodedLen(r governance.EvidenceRecord) int {
	n := fixedLen
	for _, l := range [...]int{
		len(r.RecordType), len(r.PolicyVersion), len(r.HashAlgorithm), len(r.PreviousChainHash),
		len(r.PayloadDigest), len(r.ChainHash), len(r.PayloadJSON),
	} {
		n += uvarintLen(uint64(l)) + l
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

func encodeRecord(dst []byte, r governance.EvidenceRecord) []byte {
	var fixed [fixedLen]byte
	fixed[0] = codecVersion
	copy(fixed[1:17], r.RecordID[:])
	copy(fixed[17:33], r.ChainID[:])
	binary.BigEndian.PutUint64(fixed[33:41], uint64(r.Sequence))
	copy(fixed[41:57], r.PolicyID[:])
	if r.OperationID.Valid {
		fixed[57] |= flagOperation
		copy(fixed[58:74], r.OperationID.UUID[:])
	}
	if r.SupersedesRecordID.Valid {
		fixed[57] |= flagSupersede
		copy(fixed[74:90], r.SupersedesRecordID.UUID[:])
	}
	binary.BigEndian.PutUint64(fixed[90:98], uint64(r.CreatedAt.UnixMicro()))
	dst = append(dst, fixed[:]...)
	for _, s := range [...]string{
		string(r.RecordType), r.PolicyVersion, r.HashAlgorithm, r.PreviousChainHash,
		r.PayloadDigest, r.ChainHash, r.PayloadJSON,
	} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// decodeRecord decodes a record value into a record that owns its memory.
// On error, id is the record id when the value is long enough to hold one
// (so Verify can name the record).
func decodeRecord(v []byte) (r governance.EvidenceRecord, id uuid.NullUUID, err error) {
	return decodeRecordScratch(v, nil)
}

// decodeRecordScratch is decodeRecord for Verify's hot loop: with a
// non-nil scratch, the text fields alias *scratch, which the next call
// overwrites, except ChainHash, which gets its own copy.
//
// NB: this is safe because evidence.Verifier keeps nothing of a record
// after Add but its head (ChainHash) and ids (values). It saves the copy
// of the whole value per record, a tenth of Verify's CPU.
func decodeRecordScratch(v []byte, scratch *[]byte) (r governance.EvidenceRecord, id uuid.NullUUID, err error) {
	if len(v) >= 17 {
		id = uuid.NullUUID{Valid: true}
		copy(id.UUID[:], v[1:17])
	}
	if len(v) == 0 || v[0] != codecVersion {
		return r, id, errUnknownCodec
	}
	if len(v) < fixedLen || v[57]&^(flagOperation|flagSupersede) != 0 {
		return r, id, errMalformed
	}
	copy(r.RecordID[:], v[1:17])
	copy(r.ChainID[:], v[17:33])
	r.Sequence = int64(binary.BigEndian.Uint64(v[33:41]))
	copy(r.PolicyID[:], v[41:57])
	var ok bool
	if r.OperationID, ok = optionalID(v[57]&flagOperation != 0, v[58:74]); !ok {
		return governance.EvidenceRecord{}, id, errMalformed
	}
	if r.SupersedesRecordID, ok = optionalID(v[57]&flagSupersede != 0, v[74:90]); !ok {
		return governance.EvidenceRecord{}, id, errMalformed
	}
	r.CreatedAt = time.UnixMicro(int64(binary.BigEndian.Uint64(v[90:98]))).UTC()

	// One copy for all text fields; each field is a substring of it.
	var rest string
	if scratch == nil {
		rest = string(v[fixedLen:])
	} else {
		*scratch = append((*scratch)[:0], v[fixedLen:]...)
		rest = unsafe.String(unsafe.SliceData(*scratch), len(*scratch))
	}
	var fields [7]string
	for i := range fields {
		n, w := uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return governance.EvidenceRecord{}, id, errMalformed
		}
		fields[i] = rest[w : w+int(n)]
		rest = rest[w+int(n):]
	}
	if rest != "" {
		return governance.EvidenceRecord{}, id, errMalformed
	}
	// NB: a flipped length byte shifts every later field, and the shifted
	// bytes may still frame: the digests' fixed lengths catch that, so a
	// misframed value reads as malformed (CONTENT_MISMATCH) instead of, say,
	// a garbage hash_algorithm (UNSUPPORTED_ALGORITHM). Format 1 stores
	// sha256 digests only; another algorithm needs another format version.
	if len(fields[4]) != digestLen || len(fields[5]) != digestLen || (fields[3] != "" && len(fields[3]) != digestLen) {
		return governance.EvidenceRecord{}, id, errMalformed
	}
	r.RecordType = governance.EvidenceType(fields[0])
	r.PolicyVersion, r.HashAlgorithm, r.PreviousChainHash = fields[1], fields[2], fields[3]
	r.PayloadDigest, r.ChainHash, r.PayloadJSON = fields[4], fields[5], fields[6]
	if scratch != nil {
		r.ChainHash = strings.Clone(r.ChainHash)
	}
	return r, id, nil
}

// optionalID decodes an optional id. NB: an absent id must be stored as
// zeros, otherwise a flipped byte there would change nothing the verifier
// hashes and go unnoticed.
func optionalID(present bool, b []byte) (uuid.NullUUID, bool) {
	var id uuid.NullUUID
	copy(id.UUID[:], b)
	if !present {
		return uuid.NullUUID{}, id.UUID == uuid.Nil
	}
	id.Valid = true
	return id, true
}

// uvarint is binary.Uvarint on a string (no conversion copy).
func uvarint(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		b := s[i]
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, -(i + 1) // overflow
			}
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}
