package governance

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"math/bits"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// HashAlgorithm is the only hash algorithm of the first release: SHA-256
// over canonical JSON (ADR-0087 D2).
const HashAlgorithm = "sha256-v1"

// Canonical returns the canonical JSON text of v: sorted keys, separators
// "," and ":", non-ASCII written raw. It equals Python's
// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
// byte for byte for every approved value.
//
// Approved values: nil, bool, every Go integer type, strings (valid UTF-8),
// slices and arrays of approved values, maps with string keys, json.Number
// holding an integer literal, and the projected types uuid.UUID, time.Time
// (written as UTC with six fractional digits and a terminal Z) and any named
// string type (an enum). Everything else — floats, NaN, []byte, structs,
// pointers to them, channels, invalid UTF-8 — is refused with a
// *CanonicalError naming the path to the bad value.
func Canonical(v any) ([]byte, error) {
	// NB: room for a typical argument object or payload up front, rather
	// than growing from nothing through four reallocations.
	return AppendCanonical(make([]byte, 0, 128), v)
}

// AppendCanonical appends the canonical JSON text of v to dst.
func AppendCanonical(dst []byte, v any) ([]byte, error) {
	dst, err := appendValue(dst, v)
	return dst, at(err, "$")
}

// CanonicalDigest returns the canonical text of v and the lowercase hex
// sha256 of that text.
func CanonicalDigest(v any) (text []byte, digest string, err error) {
	text, err = Canonical(v)
	if err != nil {
		return nil, "", err
	}
	return text, SHA256Hex(text), nil
}

// SHA256Hex returns the lowercase hex sha256 of b.
func SHA256Hex(b []byte) string {
	return hexDigest(sha256.Sum256(b))
}

func appendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return appendString(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case json.Number:
		return appendNumber(dst, x)
	case *big.Int:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return x.Append(dst, 10), nil
	case float32, float64:
		return nil, &CanonicalError{Reason: "float values are not approved (use integers, e.g. microseconds)"}
	case []byte:
		return nil, &CanonicalError{Reason: "bytes are not approved (encode them first, e.g. as a digest)"}
	case uuid.UUID:
		dst = append(dst, '"')
		dst = AppendUUID(dst, x)
		return append(dst, '"'), nil
	case uuid.NullUUID:
		if !x.Valid {
			return append(dst, "null"...), nil
		}
		return appendValue(dst, x.UUID)
	case time.Time:
		if x.IsZero() {
			return nil, &CanonicalError{Reason: "zero time is not approved"}
		}
		dst = append(dst, '"')
		dst = AppendTime(dst, x)
		return append(dst, '"'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e); err != nil {
				return nil, at(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return append(dst, ']'), nil
	case []string:
		return appendStrings(dst, x)
	case *Fields:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return x.appendCanonical(dst)
	case map[string]any:
		var small [16]string // a record payload's keys fit: no allocation
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendString(dst, k); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
			if dst, err = appendValue(dst, x[k]); err != nil {
				return nil, at(err, "["+strconv.Quote(k)+"]")
			}
		}
		return append(dst, '}'), nil
	}
	return appendReflect(dst, reflect.ValueOf(v))
}

// appendReflect handles the approved kinds that have no fast path: named
// integer and string types (enums), other slices, and maps with string keys.
func appendReflect(dst []byte, rv reflect.Value) ([]byte, error) {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(dst, rv.Uint(), 10), nil
	case reflect.String:
		return appendString(dst, rv.String())
	case reflect.Bool:
		return appendValue(dst, rv.Bool())
	case reflect.Float32, reflect.Float64:
		return nil, &CanonicalError{Reason: "float values are not approved (use integers, e.g. microseconds)"}
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return append(dst, "null"...), nil
		}
		return appendValue(dst, rv.Elem().Interface())
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return nil, &CanonicalError{Reason: "bytes are not approved (encode them first, e.g. as a digest)"}
		}
		dst = append(dst, '[')
		for i := 0; i < rv.Len(); i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, rv.Index(i).Interface()); err != nil {
				return nil, at(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return append(dst, ']'), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, &CanonicalError{Reason: "map keys must be strings"}
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendString(dst, k); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
			elem := rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key()))
			if dst, err = appendValue(dst, elem.Interface()); err != nil {
				return nil, at(err, "["+strconv.Quote(k)+"]")
			}
		}
		return append(dst, '}'), nil
	}
	if !rv.IsValid() {
		return append(dst, "null"...), nil
	}
	return nil, &CanonicalError{Reason: fmt.Sprintf("type %s is not approved", rv.Type())}
}

// appendNumber writes an integer literal exactly as Python's int would;
// a literal with a fraction or exponent is a float and refused.
func appendNumber(dst []byte, n json.Number) ([]byte, error) {
	s := string(n)
	if strings.ContainsAny(s, ".eE") {
		return nil, &CanonicalError{Reason: "float values are not approved (use integers, e.g. microseconds)"}
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.AppendInt(dst, i, 10), nil
	}
	var b big.Int
	if _, ok := b.SetString(s, 10); !ok {
		return nil, &CanonicalError{Reason: "not a number"}
	}
	return b.Append(dst, 10), nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string the way Python's json.dumps with
// ensure_ascii=False does: only '"', '\\' and control characters below
// U+0020 are escaped; everything else, including '<', '>', '&', U+007F,
// U+2028 and U+2029, is written raw.
func appendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, &CanonicalError{Reason: "string is not valid UTF-8"}
	}
	return appendEscaped(dst, s), nil
}

// appendEscaped is appendString for text known to be valid UTF-8 (checked
// by the caller, or written by this package): the host side's one JSON
// string escaper in Python's form (abi.AppendString is the gate wire's, in
// encoding/json's form: it compiles for guests, which import nothing of
// ours). The bytes that need no escape are found eight at a time and
// copied in runs.
func appendEscaped[T ~string | ~[]byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		for ; i+8 <= len(s); i += 8 {
			if m := escapedBytes(load64(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// escapedBytes has the high bit of the lowest byte of x (in memory order)
// that appendEscaped escapes ('"', '\\', below 0x20) set, and no lower bit;
// zero when none of the eight is. For v = x^c, (v-lowBits)&^v&highBits
// marks the lowest byte equal to c exactly, (x-lowBits*0x20)&^x&highBits
// the lowest byte below 0x20 (a borrow may mark bytes above the lowest
// one, never below it).
func escapedBytes(x uint64) uint64 {
	quote := x ^ (lowBits * '"')
	backslash := x ^ (lowBits * '\\')
	return ((quote-lowBits)&^quote | (backslash-lowBits)&^backslash | (x-lowBits*0x20)&^x) & highBits
}

// load64 is the eight bytes of s at i, little-endian; i+8 <= len(s).
func load64[T ~string | ~[]byte](s T, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// at prefixes a *CanonicalError's path with seg as the error unwinds, so
// paths cost nothing unless a value is refused.
func at(err error, seg string) error {
	if ce, ok := err.(*CanonicalError); ok {
		ce.Path = seg + ce.Path
	}
	return err
}

// appendStrings writes a list of strings (appendValue's []string, and
// Fields.Strings without boxing the list).
func appendStrings(dst []byte, list []string) ([]byte, error) {
	dst = append(dst, '[')
	for i, e := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendString(dst, e); err != nil {
			return nil, at(err, "["+strconv.Itoa(i)+"]")
		}
	}
	return append(dst, ']'), nil
}
