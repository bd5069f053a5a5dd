package permission

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// kind is the JSON type of a value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	case kindObject:
		return "object"
	}
	return "unknown"
}

// value is a decoded JSON value that keeps what Python's json.loads keeps and
// encoding/json into a map loses: the order of object members and the exact
// text of numbers.
//
// NB: a duplicated object key follows Python's dict semantics: the member
// stays at the position of its first occurrence and takes the last value.
type value struct {
	kind kind
	b    bool
	// s is the string, or the number's literal text exactly as written.
	s   string
	arr []value
	obj []member
}

type member struct {
	key string
	val value
}

// get returns the value of key in an object, and whether it is present.
func (v *value) get(key string) (*value, bool) {
	for i := range v.obj {
		if v.obj[i].key == key {
			return &v.obj[i].val, true
		}
	}
	return nil, false
}

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

var errJSON = errors.New("invalid JSON")

// jsonSyntaxError reports where a document stops being JSON.
type jsonSyntaxError struct {
	Offset int
	Msg    string
}

func (e *jsonSyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

func (e *jsonSyntaxError) Unwrap() error { return errJSON }

// parseJSON decodes one JSON document (RFC 8259, surrounding whitespace
// allowed). Invalid UTF-8 and lone surrogate escapes become U+FFFD, as with
// encoding/json.
func parseJSON(data []byte) (value, error) {
	p := parser{data: data}
	return p.document()
}

// parseJSONBorrowed is parseJSON, but strings without escapes share memory
// with data instead of being copied.
//
// NB: the caller must neither change data nor keep any decoded string past
// the lifetime it guarantees for data. Gate.Evaluate uses it for the request
// arguments: every string it returns is built by concatenation with a
// non-empty literal, or comes from the configuration, never a borrowed one.
//
// scratch, when not nil, is the backing array the top-level object's
// members are decoded into.
func parseJSONBorrowed(data []byte, scratch []member) (value, error) {
	p := parser{data: data, borrow: true, scratch: scratch}
	return p.document()
}

func (p *parser) document() (value, error) {
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return value{}, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return value{}, p.fail("unexpected data after the top-level value")
	}
	return v, nil
}

type parser struct {
	data   []byte
	pos    int
	borrow bool
	// scratch, when not nil, is the backing array the first object parsed
	// takes its members in (instead of a new one).
	scratch []member
}

func (p *parser) fail(msg string) error {
	return &jsonSyntaxError{Offset: p.pos, Msg: msg}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (value, error) {
	if p.pos >= len(p.data) {
		return value{}, p.fail("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.str()
		return value{kind: kindString, s: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return value{kind: kindBool, b: true}, p.literal("true")
	case c == 'f':
		return value{kind: kindBool}, p.literal("false")
	case c == 'n':
		return value{kind: kindNull}, p.literal("null")
	}
	return value{}, p.fail("invalid character")
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail("invalid literal")
	}
	p.pos += len(word)
	return nil
}

func (p *parser) object(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, p.fail("nesting too deep")
	}
	p.pos++ // '{'
	obj := p.scratch[:0]
	p.scratch = nil
	if obj == nil {
		obj = make([]member, 0, 4)
	}
	v := value{kind: kindObject, obj: obj}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return value{}, p.fail("expected an object key")
		}
		key, err := p.str()
		if err != nil {
			return value{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return value{}, p.fail("expected ':' after an object key")
		}
		p.pos++
		p.skipSpace()
		el, err := p.value(depth)
		if err != nil {
			return value{}, err
		}
		if old, ok := v.get(key); ok {
			*old = el
		} else {
			v.obj = append(v.obj, member{key: key, val: el})
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return value{}, p.fail("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return value{}, p.fail("expected ',' or '}' in an object")
		}
	}
}

func (p *parser) array(depth int) (value, error) {
	if depth > maxDepth {
		return value{}, p.fail("nesting too deep")
	}
	p.pos++ // '['
	v := value{kind: kindArray}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		el, err := p.value(depth)
		if err != nil {
			return value{}, err
		}
		v.arr = append(v.arr, el)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return value{}, p.fail("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return value{}, p.fail("expected ',' or ']' in an array")
		}
	}
}

func (p *parser) number() (value, error) {
	start := p.pos
	d := p.data
	if p.pos < len(d) && d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	default:
		return value{}, p.fail("invalid number")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if p.pos >= len(d) || d[p.pos] < '0' || d[p.pos] > '9' {
			return value{}, p.fail("invalid number: digit expected after '.'")
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(d) || d[p.pos] < '0' || d[p.pos] > '9' {
			return value{}, p.fail("invalid number: digit expected in exponent")
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	if p.borrow {
		return value{kind: kindNumber, s: unsafe.String(&d[start], p.pos-start)}, nil
	}
	return value{kind: kindNumber, s: string(d[start:p.pos])}, nil
}

// str decodes a string starting at the opening quote.
func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	d := p.data
	start := p.pos
	// Fast path: no escapes, ASCII or valid UTF-8.
	for p.pos < len(d) {
		c := d[p.pos]
		if c == '"' {
			s := d[start:p.pos]
			p.pos++
			if utf8.Valid(s) {
				if p.borrow && len(s) > 0 {
					return unsafe.String(&s[0], len(s)), nil
				}
				return string(s), nil
			}
			return string([]rune(string(s))), nil // invalid bytes become U+FFFD
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.pos++
	}
	buf := make([]byte, 0, p.pos-start+16)
	if prefix := d[start:p.pos]; utf8.Valid(prefix) {
		buf = append(buf, prefix...)
	} else {
		buf = append(buf, string([]rune(string(prefix)))...)
	}
	for {
		if p.pos >= len(d) {
			return "", p.fail("unterminated string")
		}
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c == '\\':
			p.pos++
			if p.pos >= len(d) {
				return "", p.fail("unterminated escape")
			}
			e := d[p.pos]
			p.pos++
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
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
				r, ok := p.hex4()
				if !ok {
					return "", p.fail("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					save := p.pos
					if p.pos+1 < len(d) && d[p.pos] == '\\' && d[p.pos+1] == 'u' {
						p.pos += 2
						if x, ok := p.hex4(); ok {
							r2 = x
						} else {
							return "", p.fail("invalid \\u escape")
						}
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						r = dec
					} else {
						// Lone surrogate: U+FFFD, and the next escape is read on its own.
						r = utf8.RuneError
						p.pos = save
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", p.fail("invalid escape character")
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(d[p.pos:])
			p.pos += size
			buf = utf8.AppendRune(buf, r) // RuneError for invalid bytes
		}
	}
}

func (p *parser) hex4() (rune, bool) {
	if len(p.data)-p.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.pos += 4
	return r, true
}
