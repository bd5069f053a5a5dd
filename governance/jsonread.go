package governance

import (
	"encoding/json"
)

// jsonReader is the host side's one JSON value builder, on the one scanner (strict_scan.go): one pass over the
// bytes, building exactly what encoding/json's Decoder with UseNumber
// builds (map[string]any, []any, string, json.Number, bool, nil) for the
// input ParseJSON accepts. It reports only success or failure: on failure
// the caller re-reads the input with encoding/json, whose error texts and
// offsets are ParseJSON's contract. Refused here (and so explained by the
// slow path): invalid UTF-8, unpaired surrogate escapes, raw control
// characters in strings, malformed numbers and literals, nesting deeper
// than maxJSONDepth, trailing data.
//
// Why not encoding/json on the hot path? Every governed call parses its
// argument object, and json.Decoder's token API costs about twenty
// allocations for a two-member object (measured, docs/performance.md).
type jsonReader struct {
	jsonScanner
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
	if depth > maxJSONDepth || r.i >= len(r.b) {
		return nil, false
	}
	switch c := r.b[r.i]; {
	case c == '{':
		obj, ok := r.object(depth, nil)
		return obj, ok
	case c == '[':
		return r.array(depth)
	case c == '"':
		s, ok := r.strValue()
		return s, ok
	case c == '-' || (c >= '0' && c <= '9'):
		return r.numberValue()
	case c == 't':
		return true, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return nil, r.literal("null")
	}
	return nil, false
}

// numberValue reads a number and keeps its literal.
func (r *jsonReader) numberValue() (any, bool) {
	start := r.i
	if !r.number() {
		return nil, false
	}
	return json.Number(r.b[start:r.i]), true
}

// strValue reads a string; a body without escapes is copied once, as is.
func (r *jsonReader) strValue() (string, bool) {
	raw, escaped, f := r.str()
	switch {
	case f != faultNone:
		return "", false
	case !escaped:
		return string(raw), true
	}
	return string(appendUnescaped(make([]byte, 0, len(raw)), raw)), true
}

func (r *jsonReader) array(depth int) (any, bool) {
	out := []any{}
	if r.enter(']') {
		return out, true
	}
	for {
		r.ws()
		v, ok := r.value(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if done, f := r.after(']'); f != faultNone {
			return nil, false
		} else if done {
			return out, true
		}
	}
}

// object reads an object; with order set, it also collects the keys in
// document order (first position of a repeated key).
func (r *jsonReader) object(depth int, order *[]string) (map[string]any, bool) {
	obj := make(map[string]any, 4)
	if r.enter('}') {
		return obj, true
	}
	for {
		r.ws()
		if r.i >= len(r.b) || r.b[r.i] != '"' {
			return nil, false
		}
		key, ok := r.strValue()
		if !ok {
			return nil, false
		}
		if !r.colon() {
			return nil, false
		}
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
		if done, f := r.after('}'); f != faultNone {
			return nil, false
		} else if done {
			return obj, true
		}
	}
}
