package governance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// ErrMalformedJSON is matched by every *JSONError.
var ErrMalformedJSON = errors.New("governance: malformed JSON")

// JSONError reports input that is not JSON (or not JSON canonical encoding
// can represent): Offset is the byte offset where reading failed.
type JSONError struct {
	Offset int64
	Reason string
}

func (e *JSONError) Error() string {
	return fmt.Sprintf("governance: malformed JSON at byte %d: %s", e.Offset, e.Reason)
}

func (e *JSONError) Is(target error) bool { return target == ErrMalformedJSON }

// ParseJSON decodes one JSON value the way Python's json.loads would for
// canonical hashing: numbers stay exact (json.Number), objects become
// map[string]any (a repeated key keeps its last value, as in Python), and
// text must be valid UTF-8 without unpaired surrogate escapes (Python would
// accept "\ud800" and then fail to encode it; Go would silently replace it).
// Trailing data after the value is refused.
func ParseJSON(data []byte) (any, error) {
	r := jsonReader{jsonScanner{b: data}}
	if v, ok := r.document(); ok {
		return v, nil
	}
	// NB: the one reader refused the input (or it nests deeply): read it
	// again with encoding/json, whose errors are this function's contract.
	return parseJSONSlow(data)
}

// parseJSONSlow is ParseJSON through encoding/json: the path of input the
// fast reader refuses, and the reference it is fuzzed against.
func parseJSONSlow(data []byte) (any, error) {
	if err := checkText(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, decodeError(data, dec, err)
	}
	if err := checkEnd(dec); err != nil {
		return nil, err
	}
	return v, nil
}

// ErrNotObject is ParseObject's answer for JSON that is not an object.
var ErrNotObject = errors.New("governance: JSON value is not an object")

// ParseObject is ParseJSON for a value that must be an object, in one pass
// that also returns the keys in document order: a repeated key keeps its
// first position and its last value, as a Python dict built by json.loads
// does. Valid JSON that is not an object is ErrNotObject.
func ParseObject(data []byte) (map[string]any, []string, error) {
	r := jsonReader{jsonScanner{b: data}}
	if obj, order, ok := r.objectDocument(); ok {
		return obj, order, nil
	}
	return parseObjectSlow(data)
}

// parseObjectSlow is ParseObject through encoding/json (see parseJSONSlow).
func parseObjectSlow(data []byte) (map[string]any, []string, error) {
	if err := checkText(data); err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, notAnObject(data)
	}
	obj := map[string]any{}
	var order []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, notAnObject(data)
		}
		key, _ := tok.(string) // the decoder refuses a key that is not a string
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, notAnObject(data)
		}
		if _, dup := obj[key]; !dup {
			order = append(order, key)
		}
		obj[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, notAnObject(data)
	}
	if err := checkEnd(dec); err != nil {
		return nil, nil, err
	}
	return obj, order, nil
}

// notAnObject explains why ParseObject stopped: ParseJSON's error when data
// is not JSON (its offsets and texts are the contract; a token stream
// reports some differently), else ErrNotObject.
func notAnObject(data []byte) error {
	if _, err := parseJSONSlow(data); err != nil {
		return err
	}
	return ErrNotObject
}

// checkText refuses what encoding/json would accept and Python would not
// encode back: invalid UTF-8 and unpaired surrogate escapes.
func checkText(data []byte) error {
	if !utf8.Valid(data) {
		return &JSONError{Offset: int64(invalidUTF8Offset(data)), Reason: "input is not valid UTF-8"}
	}
	if off, ok := findLoneSurrogate(data); ok {
		return &JSONError{Offset: int64(off), Reason: "unpaired UTF-16 surrogate escape"}
	}
	return nil
}

func decodeError(data []byte, dec *json.Decoder, err error) error {
	if off, ok := findNonFinite(data); ok {
		// Python's json.loads reads these as floats, which canonical
		// encoding refuses: say so rather than "malformed".
		return &CanonicalError{Path: fmt.Sprintf("byte %d", off), Reason: "NaN and Infinity are float values, which are not approved"}
	}
	return jsonError(dec, err)
}

func checkEnd(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return &JSONError{Offset: dec.InputOffset(), Reason: "unexpected data after the JSON value"}
	}
	return nil
}

func jsonError(dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &JSONError{Offset: se.Offset, Reason: se.Error()}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &JSONError{Offset: dec.InputOffset(), Reason: "unexpected end of input"}
	}
	return &JSONError{Offset: dec.InputOffset(), Reason: err.Error()}
}

// findNonFinite finds a NaN, Infinity or -Infinity token outside strings.
func findNonFinite(b []byte) (int, bool) {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (bytes.HasPrefix(b[i:], []byte("NaN")) || bytes.HasPrefix(b[i:], []byte("Infinity"))):
			return i, true
		}
	}
	return 0, false
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// findLoneSurrogate finds the first \uD800–\uDFFF escape inside a string
// that is not a high surrogate immediately followed by a low one, reading
// the escapes through the one scanner; it reads on past malformed text (it
// explains a refusal, so the JSON around may be anything) and gives up at
// a \u escape without four hex digits (the decoder reports that).
func findLoneSurrogate(b []byte) (int, bool) {
	s := jsonScanner{b: b}
	inString := false
	for s.i < len(b) {
		switch c := b[s.i]; {
		case !inString:
			inString = c == '"'
			s.i++
		case c == '"':
			inString = false
			s.i++
		case c == '\\':
			at := s.i
			switch s.escape() {
			case faultSurrogate:
				return at, true
			case faultMalformed:
				if at+1 >= len(b) || b[at+1] == 'u' {
					return 0, false
				}
				s.i = at + 2 // not JSON's escape: the decoder says so
			}
		default:
			s.i++
		}
	}
	return 0, false
}
