package governance

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CheckCanonical reports whether b is exactly the canonical text of some
// approved value: what Canonical(ParseJSON(b)) would return, byte for byte.
// It scans once and allocates nothing on success; stores run it on every
// payload they accept. The error is a *CanonicalError whose Path is the
// byte offset of the first non-canonical byte.
func CheckCanonical(b []byte) error { return checkCanonical(string(b)) }

// checkCanonical is CheckCanonical over a string, so a record's payload_json
// is checked without a copy.
func checkCanonical(b string) error {
	c := canonScanner{b: b}
	if err := c.value(0); err != nil {
		return err
	}
	if c.i != len(b) {
		return c.fail("data after the value")
	}
	return nil
}

type canonScanner struct {
	b string
	i int
}

// maxCanonDepth bounds nesting so hostile input cannot exhaust the stack.
const maxCanonDepth = 512

func (c *canonScanner) fail(reason string) error {
	return &CanonicalError{Path: fmt.Sprintf("byte %d", c.i), Reason: "not canonical JSON: " + reason}
}

func (c *canonScanner) value(depth int) error {
	if depth > maxCanonDepth {
		return c.fail("nested too deeply")
	}
	if c.i >= len(c.b) {
		return c.fail("unexpected end")
	}
	switch ch := c.b[c.i]; {
	case ch == '{':
		return c.object(depth)
	case ch == '[':
		return c.array(depth)
	case ch == '"':
		_, err := c.str()
		return err
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.number()
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	}
	return c.fail("unexpected character")
}

func (c *canonScanner) literal(lit string) error {
	if !strings.HasPrefix(c.b[c.i:], lit) {
		return c.fail("bad literal")
	}
	c.i += len(lit)
	return nil
}

func (c *canonScanner) number() error {
	start := c.i
	if c.b[c.i] == '-' {
		c.i++
	}
	digits := c.i
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		c.i++
	}
	n := c.i - digits
	switch {
	case n == 0:
		return c.fail("bad number")
	case c.b[digits] == '0' && n > 1:
		return c.fail("leading zero")
	case c.b[start] == '-' && n == 1 && c.b[digits] == '0':
		return c.fail("negative zero")
	}
	if c.i < len(c.b) && (c.b[c.i] == '.' || c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		return c.fail("float values are not approved")
	}
	return nil
}

// str scans a string in canonical form and returns its raw body (between
// the quotes, escapes undecoded).
func (c *canonScanner) str() (string, error) {
	c.i++ // opening quote
	start := c.i
	for c.i < len(c.b) {
		ch := c.b[c.i]
		switch {
		case ch == '"':
			body := c.b[start:c.i]
			c.i++
			return body, nil
		case ch == '\\':
			if c.i+1 >= len(c.b) {
				return "", c.fail("unexpected end")
			}
			switch c.b[c.i+1] {
			case '"', '\\', 'n', 'r', 't', 'b', 'f':
				c.i += 2
			case 'u':
				// Only control characters without a short escape are
				// written as \u00xx, in lowercase hex.
				if c.i+6 > len(c.b) || c.b[c.i+2] != '0' || c.b[c.i+3] != '0' || (c.b[c.i+4] != '0' && c.b[c.i+4] != '1') || !isLowerHex(c.b[c.i+5]) {
					return "", c.fail("escape not in canonical form")
				}
				v := (c.b[c.i+4]-'0')<<4 | hexVal(c.b[c.i+5])
				if v == '\n' || v == '\r' || v == '\t' || v == '\b' || v == '\f' {
					return "", c.fail("control character needs its short escape")
				}
				c.i += 6
			default:
				return "", c.fail("escape not in canonical form")
			}
		case ch < 0x20:
			return "", c.fail("raw control character")
		case ch < utf8.RuneSelf:
			c.i++
		default:
			r, size := utf8.DecodeRuneInString(c.b[c.i:])
			if r == utf8.RuneError && size == 1 {
				return "", c.fail("invalid UTF-8")
			}
			c.i += size
		}
	}
	return "", c.fail("unterminated string")
}

func isLowerHex(b byte) bool { return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') }

func hexVal(b byte) byte {
	if b >= 'a' {
		return b - 'a' + 10
	}
	return b - '0'
}

func (c *canonScanner) array(depth int) error {
	c.i++
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		return nil
	}
	for {
		if err := c.value(depth + 1); err != nil {
			return err
		}
		if c.i >= len(c.b) {
			return c.fail("unexpected end")
		}
		switch c.b[c.i] {
		case ',':
			c.i++
		case ']':
			c.i++
			return nil
		default:
			return c.fail("expected , or ]")
		}
	}
}

func (c *canonScanner) object(depth int) error {
	c.i++
	if c.i < len(c.b) && c.b[c.i] == '}' {
		c.i++
		return nil
	}
	var prev string
	for first := true; ; first = false {
		if c.i >= len(c.b) || c.b[c.i] != '"' {
			return c.fail("expected a string key")
		}
		keyAt := c.i
		key, err := c.str()
		if err != nil {
			return err
		}
		if !first && compareKeys(prev, key) >= 0 {
			c.i = keyAt
			return c.fail("keys not in sorted order or repeated")
		}
		prev = key
		if c.i >= len(c.b) || c.b[c.i] != ':' {
			return c.fail("expected :")
		}
		c.i++
		if err := c.value(depth + 1); err != nil {
			return err
		}
		if c.i >= len(c.b) {
			return c.fail("unexpected end")
		}
		switch c.b[c.i] {
		case ',':
			c.i++
		case '}':
			c.i++
			return nil
		default:
			return c.fail("expected , or }")
		}
	}
}

// compareKeys orders two canonical string bodies by the code points of the
// strings they encode, as Python's sort does. Bodies hold raw UTF-8 (whose
// byte order is code point order) and the canonical escapes, which stand
// for code points below U+0020 or for '"' and '\\'.
func compareKeys(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, na := decodeCanonChar(a[i:])
		rb, nb := decodeCanonChar(b[j:])
		if ra != rb {
			if ra < rb {
				return -1
			}
			return 1
		}
		i, j = i+na, j+nb
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return 0
}

func decodeCanonChar(s string) (rune, int) {
	if s[0] != '\\' {
		if s[0] < utf8.RuneSelf {
			return rune(s[0]), 1
		}
		return utf8.DecodeRuneInString(s)
	}
	switch s[1] {
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'u':
		return rune((s[4]-'0')<<4 | hexVal(s[5])), 6
	}
	return rune(s[1]), 2 // '"' or '\\'
}
