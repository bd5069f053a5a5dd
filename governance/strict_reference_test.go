package governance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// The strict check as it was before the one strict walker
// (strict_scan.go): encoding/json's token stream. It stays here as the
// reference the walker is tested and fuzzed against.

// checkExactKeysReference walks a whole JSON document and refuses any object key,
// at any depth, that is not exactly one of known, and any key repeated
// within one object. A document checked this way and then decoded into
// structs whose json tags are known (with DisallowUnknownFields) reads
// exactly as every other reader reads it: encoding/json's case-insensitive
// matching and last-duplicate-wins never come into play. A nil known
// accepts every key (duplicates are still refused).
func checkExactKeysReference(data []byte, what string, known []string) error {
	if !utf8.Valid(data) {
		return &ValidationError{Field: what, Reason: "not valid UTF-8"}
	}
	if off, ok := findLoneSurrogate(data); ok {
		return &ValidationError{Field: what, Reason: fmt.Sprintf("unpaired UTF-16 surrogate escape at byte %d", off)}
	}
	return walkExactKeys(data, what, known)
}

// walkExactKeys is checkExactKeys' walk over the document's tokens.
func walkExactKeys(data []byte, what string, known []string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object bool
		seen   map[string]bool
		expect bool // the next string token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // the decoder reports malformed JSON itself
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expect = true
				}
				continue
			}
			key := tok.(string)
			if known != nil && !contains(known, key) {
				reason := fmt.Sprintf("unknown field %q", key)
				if near := caseVariantOf(known, key); near != "" {
					reason = fmt.Sprintf("unknown field %q (keys are exact: it is not %q)", key, near)
				}
				return &ValidationError{Field: what, Reason: reason}
			}
			if top.seen[key] {
				return &ValidationError{Field: key, Reason: "appears twice"}
			}
			top.seen[key] = true
			top.expect = false
			continue
		}
		switch d, _ := tok.(json.Delim); d {
		case '{':
			stack = append(stack, &frame{object: true, seen: map[string]bool{}, expect: true})
			continue
		case '[':
			stack = append(stack, &frame{})
			continue
		case '}', ']':
			stack = stack[:len(stack)-1]
		}
		// A value ended: an enclosing object expects its next key.
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expect = true
		}
	}
}

// findLoneSurrogateReference is findLoneSurrogate before it read escapes
// through the one scanner.
// is not a high surrogate immediately followed by a low one.
func findLoneSurrogateReference(b []byte) (int, bool) {
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			if c == '"' {
				inString = true
			}
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 >= len(b) {
				return 0, false
			}
			if b[i+1] != 'u' {
				i++
				continue
			}
			u, ok := hex4(b, i+2)
			if !ok {
				return 0, false // the decoder reports the syntax error
			}
			switch {
			case u >= 0xD800 && u < 0xDC00:
				if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if lo, ok := hex4(b, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
						i += 11
						continue
					}
				}
				return i, true
			case u >= 0xDC00 && u < 0xE000:
				return i, true
			}
			i += 5
		}
	}
	return 0, false
}
