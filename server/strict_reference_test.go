package server

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The strict reader server/strict.go held before it adopted governance's
// one strict reader (governance.ReadStrictJSON): the reference the
// adoption is tested and fuzzed against, error for error.

// refMaxStrictDepth bounds nesting (encoding/json's own bound is 10000).
const refMaxStrictDepth = 1000

// refStrictReader walks one JSON document. keys holds the keys of the
// objects open on the path (each object's from its mark), to find a
// repeated key without a map; path the keys leading to the value being
// read (for messages). The first ones live in the reader itself, so a
// small body needs no allocation (a slice over an array of the reader
// would move it to the heap).
type refStrictReader struct {
	b    []byte
	i    int
	keys refStack[[32][]byte]
	path refStack[[16][]byte]
	// unknown is the first key no field names: reported once the whole
	// document is read, unless it also turns out ambiguous (which says
	// more).
	unknown error
}

// checkStrictReference reads body against the shape of dst's type: nil, or a
// refusal with its stable code (ambiguous_json, unknown_field,
// trailing_data), or errMalformed for text that is not JSON (the caller
// lets encoding/json explain it).
func checkStrictReference(body []byte, s *shape) error {
	if !utf8.Valid(body) {
		return refuse(codeAmbiguousJSON, "body: not valid UTF-8")
	}
	r := refStrictReader{b: body}
	r.ws()
	if err := r.value(s, 0); err != nil {
		return err
	}
	r.ws()
	if r.i != len(r.b) {
		return errTrailing
	}
	return r.unknown
}

func (r *refStrictReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *refStrictReader) value(s *shape, depth int) error {
	if depth > refMaxStrictDepth || r.i >= len(r.b) {
		return errMalformed
	}
	switch c := r.b[r.i]; {
	case c == '{':
		return r.object(s, depth)
	case c == '[':
		return r.array(s, depth)
	case c == '"':
		_, _, err := r.str()
		return err
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	}
	return errMalformed
}

func (r *refStrictReader) literal(lit string) error {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		return errMalformed
	}
	r.i += len(lit)
	return nil
}

// number checks JSON's number grammar.
func (r *refStrictReader) number() error {
	if r.b[r.i] == '-' {
		r.i++
	}
	switch {
	case r.i < len(r.b) && r.b[r.i] == '0':
		r.i++
	case r.digits() == 0:
		return errMalformed
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if r.digits() == 0 {
			return errMalformed
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if r.digits() == 0 {
			return errMalformed
		}
	}
	return nil
}

func (r *refStrictReader) digits() int {
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	return r.i - start
}

// str reads a string: raw is its text between the quotes, escaped
// whether it holds an escape (then its meaning differs from raw).
func (r *refStrictReader) str() (raw []byte, escaped bool, err error) {
	r.i++ // the opening quote
	start := r.i
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			raw = r.b[start:r.i]
			r.i++
			return raw, escaped, nil
		case c < 0x20:
			return nil, false, errMalformed
		case c == '\\':
			escaped = true
			if err := r.escape(); err != nil {
				return nil, false, err
			}
		default:
			r.i++
		}
	}
	return nil, false, errMalformed
}

// escape checks one escape sequence at r.i; a UTF-16 surrogate must come
// in a pair (encoding/json would replace a lone one with U+FFFD).
func (r *refStrictReader) escape() error {
	if r.i+1 >= len(r.b) {
		return errMalformed
	}
	switch r.b[r.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		r.i += 2
		return nil
	case 'u':
	default:
		return errMalformed
	}
	at := r.i
	u, ok := refHex4(r.b, r.i+2)
	if !ok {
		return errMalformed
	}
	r.i += 6
	switch {
	case u >= 0xDC00 && u <= 0xDFFF:
		return refuse(codeAmbiguousJSON, fmt.Sprintf("body: unpaired UTF-16 surrogate escape at byte %d", at))
	case u >= 0xD800 && u <= 0xDBFF:
		if r.i+1 < len(r.b) && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' {
			if lo, ok := refHex4(r.b, r.i+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				r.i += 6
				return nil
			}
		}
		return refuse(codeAmbiguousJSON, fmt.Sprintf("body: unpaired UTF-16 surrogate escape at byte %d", at))
	}
	return nil
}

func refHex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var v rune
	for _, c := range b[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func (r *refStrictReader) array(s *shape, depth int) error {
	item := freeShape
	if s != nil && !s.Free && s.Elem != nil {
		item = s.Elem
	}
	r.i++
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		return nil
	}
	for {
		r.ws()
		if err := r.value(item, depth+1); err != nil {
			return err
		}
		if done, err := r.after(']'); done || err != nil {
			return err
		}
	}
}

// after reads what follows an item or member: a comma (more follows) or
// the closing bracket (done).
func (r *refStrictReader) after(closing byte) (done bool, err error) {
	r.ws()
	if r.i >= len(r.b) {
		return false, errMalformed
	}
	switch r.b[r.i] {
	case ',':
		r.i++
		return false, nil
	case closing:
		r.i++
		return true, nil
	}
	return false, errMalformed
}

func (r *refStrictReader) object(s *shape, depth int) error {
	r.i++
	mark := r.keys.n
	defer r.keys.truncate(mark)
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == '}' {
		r.i++
		return nil
	}
	for {
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != '"' {
			return errMalformed
		}
		raw, escaped, err := r.str()
		if err != nil {
			return err
		}
		key := raw
		if escaped {
			var k string
			if json.Unmarshal(r.b[r.i-len(raw)-2:r.i], &k) != nil {
				return errMalformed
			}
			key = []byte(k)
		}
		for i := mark; i < r.keys.n; i++ {
			if string(r.keys.at(i)) == string(key) {
				return refuse(codeAmbiguousJSON, fmt.Sprintf("%s: appears twice", r.where(key)))
			}
		}
		r.keys.push(key)
		member := freeShape
		switch {
		case s == nil || s.Free:
		case s.Fields != nil:
			if f, ok := s.Fields[string(key)]; ok {
				member = f
			} else if r.unknown == nil {
				r.unknown = refuse(codeUnknownField, fmt.Sprintf("unknown field %s in %s (keys are exact and case-sensitive)", strconv.Quote(string(key)), r.where(nil)))
			}
		case s.Elem != nil:
			member = s.Elem
		}
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			return errMalformed
		}
		r.i++
		r.ws()
		r.path.push(key)
		err = r.value(member, depth+1)
		r.path.truncate(r.path.n - 1)
		if err != nil {
			return err
		}
		if done, err := r.after('}'); done || err != nil {
			return err
		}
	}
}

// where names the object being read ("body.call"), and key in it.
func (r *refStrictReader) where(key []byte) string {
	var b strings.Builder
	b.WriteString("body")
	for i := 0; i < r.path.n; i++ {
		b.WriteByte('.')
		b.Write(r.path.at(i))
	}
	if key != nil {
		b.WriteByte('.')
		b.Write(key)
	}
	return b.String()
}

// refStack is a refStack of byte strings whose first len(A) entries are held in
// A itself (A is an array type: [N][]byte).
type refStack[A interface{ ~[32][]byte | ~[16][]byte }] struct {
	first A
	more  [][]byte
	n     int
}

func (s *refStack[A]) push(b []byte) {
	if s.n < len(s.first) {
		s.first[s.n] = b
	} else {
		s.more = append(s.more, b)
	}
	s.n++
}

func (s *refStack[A]) at(i int) []byte {
	if i < len(s.first) {
		return s.first[i]
	}
	return s.more[i-len(s.first)]
}

func (s *refStack[A]) truncate(n int) {
	s.n = n
	if over := n - len(s.first); over >= 0 {
		s.more = s.more[:over]
	} else {
		s.more = s.more[:0]
	}
}
