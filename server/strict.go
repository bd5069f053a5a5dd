package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The strict reading of a request body, in one pass over its bytes and
// without allocating for a body that passes: every object key, at any
// depth, is spelled exactly as the destination's json tag (no case
// variant, no unknown key), no key appears twice in one object, text is
// valid UTF-8 without unpaired surrogate escapes, and nothing follows the
// document. encoding/json alone keeps the last duplicate, matches keys in
// any case and replaces invalid UTF-8 ({"tool":"reader","Tool":"bash"} was
// bash); it then only converts the values (decode).

// shape is what a destination type accepts, derived once per type from its
// json tags.
type shape struct {
	// fields are a struct's members by exact JSON name; nil for a type
	// that is not a struct.
	fields map[string]*shape
	// elem is the shape of a slice's or array's items and a map's values.
	elem *shape
	// free accepts any JSON here (json.RawMessage, interfaces, types with
	// their own UnmarshalJSON): strictly checked text, keys not matched.
	free bool
}

var shapes sync.Map // reflect.Type → *shape

var (
	rawMessageType  = reflect.TypeOf(json.RawMessage(nil))
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	freeShape       = &shape{free: true}
)

// shapeOf returns the shape of t (cached).
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, s)
	return s
}

func buildShape(t reflect.Type, building map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := building[t]; ok {
		return s // a recursive type: the shape being built
	}
	if t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType) || t.Kind() == reflect.Interface {
		return freeShape
	}
	s := &shape{}
	building[t] = s
	switch t.Kind() {
	case reflect.Struct:
		s.fields = map[string]*shape{}
		addFields(s.fields, t, building)
	case reflect.Slice, reflect.Array, reflect.Map:
		s.elem = buildShape(t.Elem(), building)
	}
	return s
}

// addFields adds a struct's JSON members (embedded structs' promoted).
func addFields(into map[string]*shape, t reflect.Type, building map[reflect.Type]*shape) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				addFields(into, et, building)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		into[name] = buildShape(f.Type, building)
	}
}

// Why a body was refused by readStrict.
var (
	errMalformed = errors.New("malformed JSON") // explained by encoding/json's message
	errTrailing  = errors.New("trailing data")
)

// maxStrictDepth bounds nesting (encoding/json's own bound is 10000).
const maxStrictDepth = 1000

// strictReader walks one JSON document. keys holds the keys of the
// objects open on the path (each object's from its mark), to find a
// repeated key without a map; path the keys leading to the value being
// read (for messages). The first ones live in the reader itself, so a
// small body needs no allocation (a slice over an array of the reader
// would move it to the heap).
type strictReader struct {
	b    []byte
	i    int
	keys stack[[32][]byte]
	path stack[[16][]byte]
	// unknown is the first key no field names: reported once the whole
	// document is read, unless it also turns out ambiguous (which says
	// more).
	unknown error
}

// checkStrict reads body against the shape of dst's type: nil, or a
// refusal with its stable code (ambiguous_json, unknown_field,
// trailing_data), or errMalformed for text that is not JSON (the caller
// lets encoding/json explain it).
func checkStrict(body []byte, s *shape) error {
	if !utf8.Valid(body) {
		return refuse(codeAmbiguousJSON, "body: not valid UTF-8")
	}
	r := strictReader{b: body}
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

func (r *strictReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *strictReader) value(s *shape, depth int) error {
	if depth > maxStrictDepth || r.i >= len(r.b) {
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

func (r *strictReader) literal(lit string) error {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		return errMalformed
	}
	r.i += len(lit)
	return nil
}

// number checks JSON's number grammar.
func (r *strictReader) number() error {
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

func (r *strictReader) digits() int {
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	return r.i - start
}

// str reads a string: raw is its text between the quotes, escaped
// whether it holds an escape (then its meaning differs from raw).
func (r *strictReader) str() (raw []byte, escaped bool, err error) {
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
func (r *strictReader) escape() error {
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
	u, ok := hex4(r.b, r.i+2)
	if !ok {
		return errMalformed
	}
	r.i += 6
	switch {
	case u >= 0xDC00 && u <= 0xDFFF:
		return refuse(codeAmbiguousJSON, fmt.Sprintf("body: unpaired UTF-16 surrogate escape at byte %d", at))
	case u >= 0xD800 && u <= 0xDBFF:
		if r.i+1 < len(r.b) && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' {
			if lo, ok := hex4(r.b, r.i+2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
				r.i += 6
				return nil
			}
		}
		return refuse(codeAmbiguousJSON, fmt.Sprintf("body: unpaired UTF-16 surrogate escape at byte %d", at))
	}
	return nil
}

func hex4(b []byte, at int) (rune, bool) {
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

func (r *strictReader) array(s *shape, depth int) error {
	item := freeShape
	if s != nil && !s.free && s.elem != nil {
		item = s.elem
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
		r.ws()
		if r.i >= len(r.b) {
			return errMalformed
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			return nil
		default:
			return errMalformed
		}
	}
}

func (r *strictReader) object(s *shape, depth int) error {
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
		case s == nil || s.free:
		case s.fields != nil:
			if f, ok := s.fields[string(key)]; ok {
				member = f
			} else if r.unknown == nil {
				r.unknown = refuse(codeUnknownField, fmt.Sprintf("unknown field %s in %s (keys are exact and case-sensitive)", strconv.Quote(string(key)), r.where(nil)))
			}
		case s.elem != nil:
			member = s.elem
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
		r.ws()
		if r.i >= len(r.b) {
			return errMalformed
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			return nil
		default:
			return errMalformed
		}
	}
}

// where names the object being read ("body.call"), and key in it.
func (r *strictReader) where(key []byte) string {
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

// stack is a stack of byte strings whose first len(A) entries are held in
// A itself (A is an array type: [N][]byte).
type stack[A interface{ ~[32][]byte | ~[16][]byte }] struct {
	first A
	more  [][]byte
	n     int
}

func (s *stack[A]) push(b []byte) {
	if s.n < len(s.first) {
		s.first[s.n] = b
	} else {
		s.more = append(s.more, b)
	}
	s.n++
}

func (s *stack[A]) at(i int) []byte {
	if i < len(s.first) {
		return s.first[i]
	}
	return s.more[i-len(s.first)]
}

func (s *stack[A]) truncate(n int) {
	s.n = n
	if over := n - len(s.first); over >= 0 {
		s.more = s.more[:over]
	} else {
		s.more = s.more[:0]
	}
}
