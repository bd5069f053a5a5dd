package destructive

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// lookupKey finds key among the top-level members of the JSON object raw,
// without decoding the rest. ok is false when raw is not a well-formed
// object; found reports the key; val is its (last) raw value. Empty or null
// arguments are an object with no members.
func lookupKey(raw []byte, key string) (val []byte, found, ok bool) {
	i := skipWS(raw, 0)
	if i == len(raw) || (hasAt(raw, i, "null") && skipWS(raw, i+4) == len(raw)) {
		return nil, false, true
	}
	if raw[i] != '{' {
		return nil, false, false
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil, false, skipWS(raw, i+1) == len(raw)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false, false
		}
		k, end := scanString(raw, i)
		if end < 0 {
			return nil, false, false
		}
		match := keyEquals(raw[i:end], k, key)
		i = skipWS(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false, false
		}
		i = skipWS(raw, i+1)
		vend := skipValue(raw, i, 0)
		if vend < 0 {
			return nil, false, false
		}
		if match {
			val, found = raw[i:vend], true
		}
		i = skipWS(raw, vend)
		if i >= len(raw) {
			return nil, false, false
		}
		switch raw[i] {
		case ',':
			i = skipWS(raw, i+1)
		case '}':
			return val, found, skipWS(raw, i+1) == len(raw)
		default:
			return nil, false, false
		}
	}
}

// keyEquals compares a scanned key with key; escaped keys are decoded.
func keyEquals(quoted []byte, escaped bool, key string) bool {
	if !escaped {
		return string(quoted[1:len(quoted)-1]) == key
	}
	var s string
	return json.Unmarshal(quoted, &s) == nil && s == key
}

// decodeString decodes a raw JSON string value (as scanned by scanString).
// Invalid UTF-8 and lone surrogates become U+FFFD, as encoding/json does.
func decodeString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	body := val[1 : len(val)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), true
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		if body[i] == '\\' {
			r, n := unescape(body, i)
			if n == 0 {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			i += n
			continue
		}
		// Copy the run up to the next escape; only an invalid run is
		// re-encoded rune by rune (bad bytes become U+FFFD).
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 {
			j = len(body) - i
		}
		run := body[i : i+j]
		if utf8.Valid(run) {
			out = append(out, run...)
		} else {
			for k := 0; k < len(run); {
				r, size := utf8.DecodeRune(run[k:])
				out = utf8.AppendRune(out, r)
				k += size
			}
		}
		i += j
	}
	return string(out), true
}

// unescape decodes the escape at body[i] == '\\' and returns the rune and
// the bytes it spans (0 when malformed). A surrogate pair is one rune; a
// lone surrogate is U+FFFD, as in encoding/json.
func unescape(body []byte, i int) (rune, int) {
	if i+1 >= len(body) {
		return 0, 0
	}
	switch body[i+1] {
	case '"', '\\', '/':
		return rune(body[i+1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(body, i+2)
		if !ok {
			return 0, 0
		}
		if !utf16.IsSurrogate(r) {
			return r, 6
		}
		if i+7 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
			if r2, ok := hex4(body, i+8); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, 12
				}
			}
		}
		return utf8.RuneError, 6
	}
	return 0, 0
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the end of the string starting at b[i] == '"' (one past
// the closing quote, or -1) and whether it contains escapes.
func scanString(b []byte, i int) (escaped bool, end int) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			escaped = true
			if j+1 >= len(b) {
				return false, -1
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if _, ok := hex4(b, j+2); !ok {
					return false, -1
				}
				j += 5
			default:
				return false, -1
			}
		case c == '"':
			return escaped, j + 1
		case c < 0x20:
			return false, -1
		}
	}
	return false, -1
}

// skipValue returns the end of the JSON value at b[i], or -1.
func skipValue(b []byte, i, depth int) int {
	if i >= len(b) || depth > 512 {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		_, end := scanString(b, i)
		return end
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				_, end := scanString(b, i)
				if end < 0 {
					return -1
				}
				i = skipWS(b, end)
				if i >= len(b) || b[i] != ':' {
					return -1
				}
				i = skipWS(b, i+1)
			}
			end := skipValue(b, i, depth+1)
			if end < 0 {
				return -1
			}
			i = skipWS(b, end)
			if i >= len(b) {
				return -1
			}
			if b[i] == closer {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipWS(b, i+1)
		}
	case c == '-' || isDigit(c):
		return skipNumber(b, i)
	case hasAt(b, i, "true"):
		return i + 4
	case hasAt(b, i, "false"):
		return i + 5
	case hasAt(b, i, "null"):
		return i + 4
	}
	return -1
}

// skipNumber returns the end of the JSON number at b[i], or -1.
func skipNumber(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		return j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && isDigit(b[i]):
		i = digits(i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}
