package evidence

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// The memory store keeps every payload for the life of the process, and
// on this project's VM each fresh page of memory costs more than the
// SHA-256 of a call: so a payload goes into the arena in a shorter form
// that gives back its text byte for byte. Canonical JSON never holds a
// raw control character (one inside a string is escaped, and there is no
// whitespace between tokens), so bytes below 0x20 are free to stand for
// what a governed call's payloads repeat:
//
//   - an object key the controller writes (memKeys), followed by its
//     colon: two bytes for 10–24;
//   - a quoted 64-character lowercase hex digest (argument, module,
//     policy, result digests): 32 bytes the first time on a chain, then a
//     reference to that first one (the argument digest recurs in most of
//     an operation's records, the module and policy digests in every
//     operation);
//   - a quoted UUID in its canonical text: 16 bytes for 38.
//
// A payload holding any byte below 0x20 (not canonical: only a tampered
// record's could) is kept as it is. memPayloadRoundTrip is fuzzed.
const (
	memTokKey       = 0x01 // + key index (one byte)
	memTokDigest    = 0x02 // + uvarint index in memChain.digests
	memTokNewDigest = 0x03 // + 32 bytes; becomes the next memChain.digests entry
	memTokUUID      = 0x04 // + 16 bytes
)

// memKeys are the payload keys the controller and the gates' records
// write (memTokKey). The table is this process's only: nothing durable
// depends on its order.
var memKeys = [...]string{
	"tool_id", "argument_digest", "reason_code", "gate_id", "decision", "level", "module_digest", "phase",
	"duration_us", "task_boundary_id", "policy_digest", "gate_count", "fields", "failure", "result_digest",
	"parent_operation_id", "output_argument_digest", "gate_reason_code", "gate_decision", "exception_grant_id",
	"exception_ambiguous", "break_glass", "approver_kind", "approver_id", "approval_decided_at", "approval",
	"actor_kind", "actor_id", "opened_at", "closed_at",
}

// memKeysByLen lists the indexes of memKeys by key length: a lookup
// compares a string with the few keys of its length instead of hashing
// it (a payload's every key is looked up).
var memKeysByLen = func() (t [32][]byte) {
	for i, k := range memKeys {
		t[len(k)] = append(t[len(k)], byte(i))
	}
	return t
}()

// memKeyIndex returns the index of key in memKeys.
func memKeyIndex(key string) (byte, bool) {
	if len(key) >= len(memKeysByLen) {
		return 0, false
	}
	for _, i := range memKeysByLen[len(key)] {
		if memKeys[i] == key {
			return i, true
		}
	}
	return 0, false
}

// memRecentDigests is how many of a chain's latest distinct digests a new
// payload's digests are looked up in.
const memRecentDigests = 16

// appendPayload appends p's short form to dst, which starts in the arena
// at base (a new digest's place is kept for later references). It reports
// false, having appended nothing, when p holds a control byte: the caller
// keeps p as it is.
func (c *memChain) appendPayload(dst []byte, p string, base memRef) ([]byte, bool) {
	if hasControlByte(p) {
		return dst, false
	}
	start := len(dst)
	for i := 0; i < len(p); {
		q := strings.IndexByte(p[i:], '"')
		if q < 0 {
			dst = append(dst, p[i:]...)
			break
		}
		dst = append(dst, p[i:i+q]...)
		open := i + q
		end, plain := stringEnd(p, open)
		if end < 0 { // NB: unterminated: not JSON; keep the rest as it is
			dst = append(dst, p[open:]...)
			break
		}
		s := p[open+1 : end-1]
		if plain && end < len(p) && p[end] == ':' {
			if k, ok := memKeyIndex(s); ok {
				dst = append(dst, memTokKey, k)
				i = end + 1
				continue
			}
		}
		if sum, ok := digestBytes(s); plain && ok {
			if k := c.recentDigest(&sum); k >= 0 {
				dst = binary.AppendUvarint(append(dst, memTokDigest), uint64(k))
			} else {
				dst = append(dst, memTokNewDigest)
				c.digests = append(c.digests, base+memRef(len(dst)-start))
				dst = append(dst, sum[:]...)
			}
			i = end
			continue
		}
		if plain && len(s) == 36 {
			if id, ok := canonicalUUID(s); ok {
				dst = append(append(dst, memTokUUID), id[:]...)
				i = end
				continue
			}
		}
		dst = append(dst, p[open:end]...)
		i = end
	}
	return dst, true
}

// recentDigest returns the index of sum among the chain's latest digests,
// or -1.
func (c *memChain) recentDigest(sum *[sha256.Size]byte) int {
	for k := len(c.digests) - 1; k >= max(0, len(c.digests)-memRecentDigests); k-- {
		if [sha256.Size]byte(c.bytesAt(c.digests[k])) == *sum {
			return k
		}
	}
	return -1
}

// expandPayload appends the text of a short form appendPayload wrote.
func (c *memChain) expandPayload(dst, enc []byte) []byte {
	for i := 0; i < len(enc); {
		b := enc[i]
		if b >= 0x20 {
			j := i + 1
			for j < len(enc) && enc[j] >= 0x20 {
				j++
			}
			dst = append(dst, enc[i:j]...)
			i = j
			continue
		}
		switch b {
		case memTokKey:
			dst = append(append(append(dst, '"'), memKeys[enc[i+1]]...), `":`...)
			i += 2
		case memTokDigest:
			k, n := binary.Uvarint(enc[i+1:])
			dst = appendQuotedHex(dst, c.bytesAt(c.digests[k])[:sha256.Size])
			i += 1 + n
		case memTokNewDigest:
			dst = appendQuotedHex(dst, enc[i+1:i+1+sha256.Size])
			i += 1 + sha256.Size
		case memTokUUID:
			dst = append(governance.AppendUUID(append(dst, '"'), uuid.UUID(enc[i+1:i+17])), '"')
			i += 17
		}
	}
	return dst
}

// payloadLen is the length of the text expandPayload gives back.
func (c *memChain) payloadLen(enc []byte) int {
	n := 0
	for i := 0; i < len(enc); {
		switch enc[i] {
		case memTokKey:
			n += len(memKeys[enc[i+1]]) + 3
			i += 2
		case memTokDigest:
			_, w := binary.Uvarint(enc[i+1:])
			n += 2*sha256.Size + 2
			i += 1 + w
		case memTokNewDigest:
			n += 2*sha256.Size + 2
			i += 1 + sha256.Size
		case memTokUUID:
			n += 38
			i += 17
		default:
			n++
			i++
		}
	}
	return n
}

func appendQuotedHex(dst, sum []byte) []byte {
	return append(hex.AppendEncode(append(dst, '"'), sum), '"')
}

// stringEnd returns the index just after the JSON string that opens at
// p[open] and whether it holds no escape; -1 if it does not end. A byte
// loop: a payload's strings are short (keys, codes, 64-digit digests).
func stringEnd(p string, open int) (int, bool) {
	plain := true
	for k := open + 1; k < len(p); k++ {
		switch p[k] {
		case '"':
			return k + 1, plain
		case '\\':
			plain = false
			k++ // NB: the escaped byte
		}
	}
	return -1, false
}

// hasControlByte reports whether s holds a byte below 0x20, eight bytes
// at a time.
func hasControlByte(s string) bool {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		// NB: a byte b < 0x20 borrows in b-0x20 and had its high bit clear.
		if (x-lo)&^x&hi != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// digestBytes returns the 32 bytes a 64-digit lowercase hex digest
// stands for, in one pass.
func digestBytes(s string) (sum [sha256.Size]byte, ok bool) {
	if len(s) != 2*sha256.Size {
		return sum, false
	}
	var bad byte
	for i := range sum {
		hi, lo := lowerHexValue[s[2*i]], lowerHexValue[s[2*i+1]]
		bad |= hi | lo
		sum[i] = hi<<4 | lo&0x0f
	}
	return sum, bad&0x80 == 0
}

// lowerHexValue is a lowercase hex digit's value, 0x80 for any other byte.
var lowerHexValue = func() (t [256]byte) {
	for i := range t {
		switch {
		case i >= '0' && i <= '9':
			t[i] = byte(i - '0')
		case i >= 'a' && i <= 'f':
			t[i] = byte(i - 'a' + 10)
		default:
			t[i] = 0x80
		}
	}
	return t
}()

func isLowerHex[T ~string | ~[]byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// canonicalUUID parses s if it is a UUID exactly as uuid.UUID.String
// writes one (lowercase, hyphenated), the only text memTokUUID gives back.
func canonicalUUID(s string) (uuid.UUID, bool) {
	var id uuid.UUID
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	var digits [32]byte
	n := copy(digits[:], s[:8])
	n += copy(digits[n:], s[9:13])
	n += copy(digits[n:], s[14:18])
	n += copy(digits[n:], s[19:23])
	copy(digits[n:], s[24:])
	if !isLowerHex(digits[:]) {
		return id, false
	}
	_, _ = hex.Decode(id[:], digits[:])
	return id, true
}
