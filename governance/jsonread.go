package governance

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonReader is the host side's one JSON value reader: one pass over the
// bytes, building exactly what encoding/json's Decoder with UseNumber
// builds (map[string]any, []any, string, json.Number, bool, nil) for the
// input ParseJSON accepts. It reports only success or failure: on failure
// the caller re-reads the input with encoding/json, whose error texts and
// offsets are ParseJSON's contract. Refused here (and so explained by the
// slow path): invalid UTF-8, unpaired surrogate escapes, raw control
// characters in strings, malformed numbers and literals, nesting deeper
// than maxReadDepth, trailing data.
//
// Why not encoding/json on the hot path? Every governed call parses its
// argument object, and json.Decoder's token API costs about twenty
// allocations for a two-member object (measured, docs/performance.md).
type jsonReader struct {
	b []byte
	i int
}

// maxReadDepth bounds the fast path's recursion; deeper input goes to
// encoding/json, which has its own bound.
const maxReadDepth = 512

func (r *jsonReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// document reads one value surrounded by optional whitespace and nothing
// else.
func (r *jsonReader) document() (any, bool) {
	r.ws()
	v, ok := r.value(0)
	if !ok {
		return nil, false
	}
	r.ws()
	return v, r.i == len(r.b)
}

// objectDocument reads a document that is one object, returning its keys
// in document order (a repeated key keeps its first position and its last
// value).
func (r *jsonReader) objectDocument() (map[string]any, []string, bool) {
	r.ws()
	if r.i >= len(r.b) || r.b[r.i] != '{' {
		return nil, nil, false
	}
	order := make([]string, 0, 8)
	obj, ok := r.object(0, &order)
	if !ok {
		return nil, nil, false
	}
	r.ws()
	if len(order) == 0 {
		order = nil // as encoding/json's path returns an empty object's order
	}
	return obj, order, r.i == len(r.b)
}

func (r *jsonReader) value(depth int) (any, bool) {
	if depth > maxReadDepth || r.i >= len(r.b) {
		return nil, false
	}
	switch c := r.b[r.i]; {
	case c == '{':
		obj, ok := r.object(depth, nil)
		return obj, ok
	case c == '[':
		return r.array(depth)
	case c == '"':
		s, ok := r.str()
		return s, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return r.number()
	case c == 't':
		return true, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return nil, r.literal("null")
	}
	return nil, false
}

func (r *jsonReader) literal(lit string) bool {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		return false
	}
	r.i += len(lit)
	return true
}

// number reads RFC 8259's number grammar and keeps the literal.
func (r *jsonReader) number() (any, bool) {
	start := r.i
	if r.b[r.i] == '-' {
		r.i++
	}
	switch {
	case r.i < len(r.b) && r.b[r.i] == '0':
		r.i++
	case r.i < len(r.b) && r.b[r.i] >= '1' && r.b[r.i] <= '9':
		r.digits()
	default:
		return nil, false
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if r.digits() == 0 {
			return nil, false
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if r.digits() == 0 {
			return nil, false
		}
	}
	return json.Number(r.b[start:r.i]), true
}

func (r *jsonReader) digits() int {
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	return r.i - start
}

// str reads a string; a body without escapes is copied once, as is.
func (r *jsonReader) str() (string, bool) {
	r.i++ // opening quote
	start := r.i
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			s := string(r.b[start:r.i])
			r.i++
			return s, true
		case c == '\\':
			return r.escapedStr(start)
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			r.i++
		default:
			ch, size := utf8.DecodeRune(r.b[r.i:])
			if ch == utf8.RuneError && size == 1 {
				return "", false
			}
			r.i += size
		}
	}
	return "", false
}

// escapedStr finishes a string whose body from start holds an escape at
// r.i, decoding into a new buffer.
func (r *jsonReader) escapedStr(start int) (string, bool) {
	buf := make([]byte, 0, r.i-start+16)
	buf = append(buf, r.b[start:r.i]...)
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return string(buf), true
		case c == '\\':
			if r.i+1 >= len(r.b) {
				return "", false
			}
			r.i += 2
			switch r.b[r.i-1] {
			case '"', '\\', '/':
				buf = append(buf, r.b[r.i-1])
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				u, ok := hex4(r.b, r.i)
				if !ok {
					return "", false
				}
				r.i += 4
				if utf16.IsSurrogate(u) {
					// Only a high surrogate escape followed by a low one
					// is text; checkText refuses the rest.
					if u >= 0xDC00 || r.i+6 > len(r.b) || r.b[r.i] != '\\' || r.b[r.i+1] != 'u' {
						return "", false
					}
					lo, ok := hex4(r.b, r.i+2)
					if !ok || lo < 0xDC00 || lo >= 0xE000 {
						return "", false
					}
					r.i += 6
					u = utf16.DecodeRune(u, lo)
				}
				buf = utf8.AppendRune(buf, u)
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			r.i++
		default:
			ch, size := utf8.DecodeRune(r.b[r.i:])
			if ch == utf8.RuneError && size == 1 {
				return "", false
			}
			buf = append(buf, r.b[r.i:r.i+size]...)
			r.i += size
		}
	}
	return "", false
}

func (r *jsonReader) array(depth int) (any, bool) {
	r.i++
	out := []any{}
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == ']' {
		r.i++
		return out, true
	}
	for {
		r.ws()
		v, ok := r.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		r.ws()
		if r.i >= len(r.b) {
			return nil, false
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			return out, true
		default:
			return nil, false
		}
	}
}

// object reads an object; with order set, it also collects the keys in
// document order (first position of a repeated key).
func (r *jsonReader) object(depth int, order *[]string) (map[string]any, bool) {
	r.i++
	obj := make(map[string]any, 4)
	r.ws()
	if r.i < len(r.b) && r.b[r.i] == '}' {
		r.i++
		return obj, true
	}
	for {
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != '"' {
			return nil, false
		}
		key, ok := r.str()
		if !ok {
			return nil, false
		}
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			return nil, false
		}
		r.i++
		r.ws()
		v, ok := r.value(depth + 1)
		if !ok {
			return nil, false
		}
		if order != nil {
			if _, dup := obj[key]; !dup {
				*order = append(*order, key)
			}
		}
		obj[key] = v
		r.ws()
		if r.i >= len(r.b) {
			return nil, false
		}
		switch r.b[r.i] {
		case ',':
			r.i++
		case '}':
			r.i++
			return obj, true
		default:
			return nil, false
		}
	}
}
