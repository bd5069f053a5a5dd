package pebblestore

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"time"
	"unsafe"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Record value, codec 1. Every field of the record is stored, including
// chain id and sequence (also in the key), so a value moved under another
// key is caught by the verifier as a broken link rather than silently
// re-labelled:
//
//	[0]       codec version (1)
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
// Codec 2 (written by format 2 stores) stores the three digests as raw
// bytes instead of 64-character hex, a sixth of a record's bytes, which
// every layer of the LSM (WAL, memtable, flush, compactions) copies:
//
//	[0]        codec version (2)
//	[1:98]     as codec 1; flags bit 2: previous_chain_hash present
//	[98:130]   payload_digest, raw
//	[130:162]  chain_hash, raw
//	[162:194]  previous_chain_hash, raw (zeros when absent: genesis)
//	then uvarint length + bytes of: record_type, policy_version,
//	hash_algorithm, payload_json
//
// A record whose digests are not lowercase hex SHA-256 (none passes the
// store's integrity check today) is written with codec 1, so any record
// round-trips byte for byte. Both codecs are read.
//
// Why binary and not JSON? Verify decodes every record; a JSON decode costs
// several times the two SHA-256 the check needs, and the 400k records/s
// target leaves ~2.5µs per record. Decoding here is one allocation (the
// value copied into a string all text fields share).
const (
	codecVersion  = 1
	codecV2       = 2
	fixedLen      = 98
	fixedLenV2    = fixedLen + 3*rawDigestLen
	flagOperation = 1 << 0
	flagSupersede = 1 << 1
	flagPrevious  = 1 << 2 // codec 2 only
	digestLen     = 64     // hex sha256
	rawDigestLen  = 32
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
	if !rawDigests(r) {
		return encodedLenV1(r)
	}
	n := fixedLenV2
	for _, l := range [...]int{len(r.RecordType), len(r.PolicyVersion), len(r.HashAlgorithm), len(r.PayloadJSON)} {
		n += uvarintLen(uint64(l)) + l
	}
	return n
}

func encodedLenV1(r governance.EvidenceRecord) int {
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

// rawDigests reports whether r's digests can be stored raw (codec 2) and
// read back as the same text: lowercase hex of 32 bytes, the previous one
// possibly empty.
func rawDigests(r governance.EvidenceRecord) bool {
	return isLowerHexDigest(r.PayloadDigest) && isLowerHexDigest(r.ChainHash) &&
		(r.PreviousChainHash == "" || isLowerHexDigest(r.PreviousChainHash))
}

func isLowerHexDigest(s string) bool {
	if len(s) != digestLen {
		return false
	}
	var acc byte // NB: no branch a character: encoding checks 36 digests a call
	for i := 0; i < digestLen; i++ {
		acc |= unhex[s[i]]
	}
	return acc&0xf0 == 0
}

// encodeRecord appends r's value: codec 2 when its digests allow
// (rawDigests), else codec 1.
func encodeRecord(dst []byte, r governance.EvidenceRecord) []byte {
	if !rawDigests(r) {
		return encodeRecordV1(dst, r)
	}
	fixed := putFixed(codecV2, r)
	if r.PreviousChainHash != "" {
		fixed[57] |= flagPrevious
	}
	dst = append(dst, fixed[:]...)
	dst = appendRawDigest(dst, r.PayloadDigest)
	dst = appendRawDigest(dst, r.ChainHash)
	if r.PreviousChainHash != "" {
		dst = appendRawDigest(dst, r.PreviousChainHash)
	} else {
		dst = append(dst, make([]byte, rawDigestLen)...)
	}
	for _, s := range [...]string{string(r.RecordType), r.PolicyVersion, r.HashAlgorithm, r.PayloadJSON} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// appendRawDigest appends the 32 bytes of a lowercase hex digest
// (rawDigests checked it).
func appendRawDigest(dst []byte, h string) []byte {
	_ = h[digestLen-1]
	var raw [digestLen / 2]byte
	for i := range raw {
		raw[i] = unhex[h[2*i]]<<4 | unhex[h[2*i+1]]
	}
	return append(dst, raw[:]...)
}

// unhex maps a lowercase hex digit to its value, any other byte to 0xff.
var unhex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

// encodeRecordV1 appends r's value in codec 1.
func encodeRecordV1(dst []byte, r governance.EvidenceRecord) []byte {
	fixed := putFixed(codecVersion, r)
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

// putFixed returns the fixed-width head both codecs share.
func putFixed(version byte, r governance.EvidenceRecord) [fixedLen]byte {
	var fixed [fixedLen]byte
	fixed[0] = version
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
	return fixed
}

// Codec 12 (format 3): the records of one appended batch of two or more,
// under one key, the key of the batch's first record:
//
//	[0]      codec version (12)
//	then     uvarint record count (at least 2)
//	then     per record: uvarint length + its codec 2 (or 1) value
//
// A batch of one record is stored as that record's value. Why? Pebble's
// costs are per key as much as per byte (a skiplist node, a WAL and batch
// entry, a key in every flush and compaction): a governed call's batch of
// five records is one key instead of five. Records stay whole values
// inside, so every check above applies to each of them unchanged.
//
// Why 12 and not 3? 3 is one flipped bit from codec 2 (and from codec 1):
// a record value whose first byte flipped must read as an unknown codec
// (UNSUPPORTED_ALGORITHM naming the record), not as a malformed batch.
// 12 is two bits or more from 1 and 2, and its own one-bit flips are
// unknown codecs too.
const codecBatch = 12

// batchValueLen is the length appendBatchValue appends.
func batchValueLen(records []governance.EvidenceRecord) int {
	n := 1 + uvarintLen(uint64(len(records)))
	for _, r := range records {
		l := encodedLen(r)
		n += uvarintLen(uint64(l)) + l
	}
	return n
}

// appendBatchValue appends the codec 12 value of records (two or more).
func appendBatchValue(dst []byte, records []governance.EvidenceRecord) []byte {
	dst = append(dst, codecBatch)
	dst = binary.AppendUvarint(dst, uint64(len(records)))
	for _, r := range records {
		dst = binary.AppendUvarint(dst, uint64(encodedLen(r)))
		dst = encodeRecord(dst, r)
	}
	return dst
}

// recordsIn decodes the records of a stored value (one record's value, or
// a codec 12 batch) in order, calling fn for each until it returns false;
// scratch is as for decodeRecordScratch. On a value that does not decode
// it returns the error and, when known, the id of the record that failed.
func recordsIn(v []byte, scratch *[]byte, fn func(governance.EvidenceRecord) bool) (uuid.NullUUID, error) {
	if len(v) == 0 || v[0] != codecBatch {
		r, id, err := decodeRecordScratch(v, scratch)
		if err == nil {
			fn(r)
		}
		return id, err
	}
	count, w := binary.Uvarint(v[1:])
	if w <= 0 || count < 2 {
		return uuid.NullUUID{}, errMalformed
	}
	rest := v[1+w:]
	for i := uint64(0); i < count; i++ {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return uuid.NullUUID{}, errMalformed
		}
		sub := rest[w : w+int(n)]
		rest = rest[w+int(n):]
		if len(sub) > 0 && sub[0] == codecBatch {
			return uuid.NullUUID{}, errMalformed // a batch inside a batch
		}
		r, id, err := decodeRecordScratch(sub, scratch)
		if err != nil {
			return id, err
		}
		if !fn(r) {
			return uuid.NullUUID{}, nil
		}
	}
	if len(rest) != 0 {
		return uuid.NullUUID{}, errMalformed
	}
	return uuid.NullUUID{}, nil
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
	if len(v) == 0 || (v[0] != codecVersion && v[0] != codecV2) {
		return r, id, errUnknownCodec
	}
	flags := byte(flagOperation | flagSupersede)
	if v[0] == codecV2 {
		flags |= flagPrevious
	}
	if len(v) < fixedLen || v[57]&^flags != 0 {
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

	if v[0] == codecV2 {
		return decodeTextV2(r, id, v, scratch)
	}

	// One copy for all text fields; each field is a substring of it.
	var rest string
	if scratch == nil {
		rest = string(v[fixedLen:])
	} else {
		*scratch = append((*scratch)[:0], v[fixedLen:]...)
		rest = unsafe.String(unsafe.SliceData(*scratch), len(*scratch))
	}
	var fields [7]string
	if !splitFields(fields[:], rest) {
		return governance.EvidenceRecord{}, id, errMalformed
	}
	// NB: a flipped length byte shifts every later field, and the shifted
	// bytes may still frame: the digests' fixed lengths catch that, so a
	// misframed value reads as malformed (CONTENT_MISMATCH) instead of, say,
	// a garbage hash_algorithm (UNSUPPORTED_ALGORITHM). Codec 1 stores
	// sha256 digests only; another algorithm needs another codec version.
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

// decodeTextV2 decodes the digests and text fields of a codec 2 value into
// r, whose fixed fields are decoded. As with codec 1, one copy holds every
// text field: the three digests in hex, then the length-prefixed fields.
func decodeTextV2(r governance.EvidenceRecord, id uuid.NullUUID, v []byte, scratch *[]byte) (governance.EvidenceRecord, uuid.NullUUID, error) {
	if len(v) < fixedLenV2 {
		return governance.EvidenceRecord{}, id, errMalformed
	}
	digests := v[fixedLen:fixedLenV2]
	hasPrevious := v[57]&flagPrevious != 0
	if !hasPrevious && [rawDigestLen]byte(digests[2*rawDigestLen:]) != [rawDigestLen]byte{} {
		// Absent must be zeros, or a flipped byte there would go unnoticed.
		return governance.EvidenceRecord{}, id, errMalformed
	}
	var buf []byte
	if scratch == nil {
		buf = make([]byte, 0, 3*digestLen+len(v)-fixedLenV2)
	} else {
		buf = (*scratch)[:0]
	}
	buf = hex.AppendEncode(buf, digests)
	buf = append(buf, v[fixedLenV2:]...)
	if scratch != nil {
		*scratch = buf
	}
	text := unsafe.String(unsafe.SliceData(buf), len(buf)) // NB: buf is not written again (or is the caller's scratch)
	var fields [4]string
	if !splitFields(fields[:], text[3*digestLen:]) {
		return governance.EvidenceRecord{}, id, errMalformed
	}
	r.PayloadDigest, r.ChainHash = text[:digestLen], text[digestLen:2*digestLen]
	if hasPrevious {
		r.PreviousChainHash = text[2*digestLen : 3*digestLen]
	}
	r.RecordType = governance.EvidenceType(fields[0])
	r.PolicyVersion, r.HashAlgorithm, r.PayloadJSON = fields[1], fields[2], fields[3]
	if scratch != nil {
		r.ChainHash = strings.Clone(r.ChainHash)
	}
	return r, id, nil
}

// splitFields splits rest into len(fields) uvarint-length-prefixed fields
// that must use all of it.
func splitFields(fields []string, rest string) bool {
	for i := range fields {
		n, w := uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			return false
		}
		fields[i] = rest[w : w+int(n)]
		rest = rest[w+int(n):]
	}
	return rest == ""
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
