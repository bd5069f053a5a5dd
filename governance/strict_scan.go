package governance

import (
	"bytes"
	"encoding/json"
)

// strictScan is CheckStrictJSON's fast path: one pass over the bytes that
// finds a key repeated within an object without building tokens (the
// token walk costs an allocation or more per token: a hook input's check
// doubled the allocations of a whole pre-tool event). It answers only for
// well-formed input it can read in full: ok is false on anything else
// (malformed JSON, nesting deeper than maxReadDepth, an object of more than
// maxScanKeys keys), and the caller walks the tokens instead, so the
// answers are the token walk's.
type strictScan struct {
	b    []byte
	i    int
	keys []scanKey // the keys of the objects being read, innermost last
}

// maxScanKeys bounds the keys of one object the fast path compares
// pairwise; a larger object goes to the token walk.
const maxScanKeys = 64

// scanKey is an object key as written (between its quotes); escaped keys
// are compared decoded.
type scanKey struct {
	raw     []byte
	escaped bool
}

func (k scanKey) text() string {
	if !k.escaped {
		return string(k.raw)
	}
	var s string
	quoted := make([]byte, 0, len(k.raw)+2)
	quoted = append(append(append(quoted, '"'), k.raw...), '"')
	_ = json.Unmarshal(quoted, &s) // read before: well-formed
	return s
}

func (k scanKey) equal(o scanKey) bool {
	if !k.escaped && !o.escaped {
		return bytes.Equal(k.raw, o.raw)
	}
	return k.text() == o.text()
}

// scanDuplicateKeys reports the first key repeated within one object of
// data, or ok false when the fast path cannot answer.
func scanDuplicateKeys(data []byte) (dup string, found, ok bool) {
	var room [16]scanKey
	s := strictScan{b: data, keys: room[:0]}
	s.ws()
	dup, found, ok = s.value(0)
	if !ok || found {
		return dup, found, ok
	}
	s.ws()
	return "", false, s.i == len(s.b)
}

func (s *strictScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *strictScan) value(depth int) (dup string, found, ok bool) {
	if depth > maxReadDepth || s.i >= len(s.b) {
		return "", false, false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		_, ok := s.str()
		return "", false, ok
	case c == 't':
		return "", false, s.literal("true")
	case c == 'f':
		return "", false, s.literal("false")
	case c == 'n':
		return "", false, s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return "", false, s.number()
	}
	return "", false, false
}

func (s *strictScan) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number reads a number by JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *strictScan) number() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *strictScan) digits() int {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// str reads a string; its content is what lies between the quotes.
func (s *strictScan) str() (scanKey, bool) {
	s.i++ // the opening quote
	start, escaped := s.i, false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			k := scanKey{raw: s.b[start:s.i], escaped: escaped}
			s.i++
			return k, true
		case c == '\\':
			escaped = true
			s.i += 2
		case c < 0x20:
			return scanKey{}, false
		default:
			s.i++
		}
	}
	return scanKey{}, false
}

func (s *strictScan) object(depth int) (dup string, found, ok bool) {
	s.i++
	mark := len(s.keys)
	defer func() { s.keys = s.keys[:mark] }()
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return "", false, true
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return "", false, false
		}
		key, ok := s.str()
		if !ok || len(s.keys)-mark >= maxScanKeys {
			return "", false, false
		}
		for _, seen := range s.keys[mark:] {
			if seen.equal(key) {
				return key.text(), true, true
			}
		}
		s.keys = append(s.keys, key)
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return "", false, false
		}
		s.i++
		s.ws()
		if dup, found, ok := s.value(depth + 1); !ok || found {
			return dup, found, ok
		}
		s.ws()
		if s.i >= len(s.b) {
			return "", false, false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return "", false, true
		default:
			return "", false, false
		}
	}
}

func (s *strictScan) array(depth int) (dup string, found, ok bool) {
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return "", false, true
	}
	for {
		s.ws()
		if dup, found, ok := s.value(depth + 1); !ok || found {
			return dup, found, ok
		}
		s.ws()
		if s.i >= len(s.b) {
			return "", false, false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return "", false, true
		default:
			return "", false, false
		}
	}
}
