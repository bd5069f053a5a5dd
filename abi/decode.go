package abi

import (
	"errors"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Why a hand-written codec? Inside a Go-built Wasm guest every heap
// allocation costs about a microsecond and encoding/json's reflection tens
// of microseconds per document; decoding GateInput with one allocation and
// no reflection is what lets a Go gate answer in a few microseconds. The
// codec accepts exactly the JSON that encoding/json accepts for these types
// and is differentially fuzzed against it (codec_test.go); keys match
// exactly (encoding/json also matches them case-insensitively).

// ErrSyntax is returned (wrapped) for input that is not valid JSON, or whose
// values do not have the types of the wire structs.
var ErrSyntax = errors.New("abi: invalid JSON document")

const maxDepth = 10000 // nesting of objects and arrays, counting the document itself, as encoding/json

// DecodeGateInput parses a GateInput JSON document into in, as
// json.Unmarshal into a zero GateInput would, with one allocation for all
// strings plus one per path fact array growth and metadata map.
//
// It reuses the backing arrays of in.Paths and in.ArgumentOrder and the
// ActorRef in.Context.Actor points to: the caller must not keep references
// to them across calls. in.Arguments shares memory with in's strings and
// must not be modified.
func DecodeGateInput(data []byte, in *GateInput) error {
	d := decoder{s: string(data)}
	paths, order, actor := in.Paths[:0], in.ArgumentOrder[:0], in.Context.Actor
	*in = GateInput{}
	d.ws()
	if d.literal("null") {
		return d.end()
	}
	// NB: the members are read in this loop, not through d.object and a
	// closure: in a Go-built guest each call costs hundreds of instructions.
	if d.peek() != '{' {
		return d.syntax()
	}
	d.i++
	d.depth++
	d.ws()
	if d.peek() == '}' {
		d.i++
		d.depth--
		return d.end()
	}
	for {
		d.ws()
		var key string
		if err := d.rawStr(&key); err != nil {
			return err
		}
		d.ws()
		if d.peek() != ':' {
			return d.syntax()
		}
		d.i++
		d.ws()
		var err error
		switch key {
		case "abi_version":
			err = d.int(&in.ABIVersion)
		case "gate_id":
			err = d.str(&in.GateID)
		case "phase":
			err = d.str((*string)(&in.Phase))
		case "tool":
			err = d.str(&in.Tool)
		case "operation":
			err = d.str(&in.Operation)
		case "action":
			err = d.str(&in.Action)
		case "cwd":
			err = d.str(&in.Cwd)
		case "workspace":
			err = d.str(&in.Workspace)
		case "arguments":
			start := d.i
			if err = d.skip(); err == nil {
				in.Arguments = unsafe.Slice(unsafe.StringData(d.s[start:d.i]), d.i-start)
			}
		case "argument_order":
			if d.literal("null") {
				in.ArgumentOrder = nil
				break
			}
			in.ArgumentOrder = order[:0]
			err = d.array(func() error {
				in.ArgumentOrder = append(in.ArgumentOrder, "")
				return d.str(&in.ArgumentOrder[len(in.ArgumentOrder)-1])
			})
		case "paths":
			if d.literal("null") {
				in.Paths = nil
				break
			}
			in.Paths = paths[:0]
			err = d.array(func() error {
				in.Paths = append(in.Paths, PathFact{})
				return d.pathFact(&in.Paths[len(in.Paths)-1])
			})
		case "context":
			err = d.context(&in.Context, actor)
		default:
			err = d.skip()
		}
		if err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
			continue
		case '}':
			d.i++
			d.depth--
			return d.end()
		}
		return d.syntax()
	}
}

// DecodeGateOutput parses a GateOutput JSON document into out, as
// json.Unmarshal into a zero GateOutput would. out.Arguments shares memory
// with out's strings and must not be modified. It does not Validate.
func DecodeGateOutput(data []byte, out *GateOutput) error {
	d := decoder{s: string(data)}
	*out = GateOutput{}
	d.ws()
	if d.literal("null") {
		return d.end()
	}
	err := d.object(func(key string) error {
		switch key {
		case "decision":
			return d.str((*string)(&out.Decision))
		case "reason_code":
			return d.str(&out.ReasonCode)
		case "detail":
			return d.str(&out.Detail)
		case "message":
			return d.str(&out.Message)
		case "matched_rule":
			return d.str(&out.MatchedRule)
		case "deny_message":
			return d.str(&out.DenyMessage)
		case "arguments":
			start := d.i
			if err := d.skip(); err != nil {
				return err
			}
			out.Arguments = unsafe.Slice(unsafe.StringData(d.s[start:d.i]), d.i-start)
			return nil
		}
		return d.skip()
	})
	if err != nil {
		return err
	}
	return d.end()
}

// ValidJSON reports whether b is one valid JSON value (surrounding
// whitespace allowed), without allocating.
func ValidJSON(b []byte) bool {
	d := decoder{s: unsafe.String(unsafe.SliceData(b), len(b))}
	d.ws()
	return d.skip() == nil && d.end() == nil
}

func (d *decoder) pathFact(p *PathFact) error {
	if d.literal("null") {
		return nil
	}
	return d.object(func(key string) error {
		switch key {
		case "arg":
			return d.str(&p.Arg)
		case "raw":
			return d.str(&p.Raw)
		case "resolved":
			return d.str(&p.Resolved)
		case "exists":
			return d.bool(&p.Exists)
		case "kind":
			return d.str((*string)(&p.Kind))
		case "nearest_existing":
			return d.str(&p.NearestExisting)
		case "link":
			return d.bool(&p.Link)
		}
		return d.skip()
	})
}

func (d *decoder) context(c *OperationInfo, scratch *ActorRef) error {
	if d.literal("null") {
		return nil
	}
	return d.object(func(key string) error {
		switch key {
		case "operation_id":
			return d.str(&c.OperationID)
		case "run_id":
			return d.str(&c.RunID)
		case "agent_name":
			return d.str(&c.AgentName)
		case "tool_call_id":
			return d.str(&c.ToolCallID)
		case "actor":
			if d.literal("null") {
				c.Actor = nil
				return nil
			}
			if c.Actor == nil {
				if scratch != nil {
					*scratch = ActorRef{}
					c.Actor = scratch
				} else {
					c.Actor = &ActorRef{}
				}
			}
			a := c.Actor
			return d.object(func(key string) error {
				switch key {
				case "kind":
					return d.str(&a.Kind)
				case "id":
					return d.str(&a.ID)
				}
				return d.skip()
			})
		case "assignments":
			if d.literal("null") {
				c.Assignments = nil
				return nil
			}
			list := []Assignment{}
			if err := d.array(func() error {
				list = append(list, Assignment{})
				return d.assignment(&list[len(list)-1])
			}); err != nil {
				return err
			}
			c.Assignments = &list
			return nil
		case "metadata":
			if d.literal("null") {
				c.Metadata = nil
				return nil
			}
			if d.peek() != '{' {
				return d.syntax()
			}
			if c.Metadata == nil {
				c.Metadata = map[string]string{}
			}
			return d.object(func(key string) error {
				var v string
				if err := d.str(&v); err != nil {
					return err
				}
				c.Metadata[key] = v
				return nil
			})
		}
		return d.skip()
	})
}

func (d *decoder) assignment(a *Assignment) error {
	return d.object(func(key string) error {
		switch key {
		case "duty":
			return d.str(&a.Duty)
		case "actor":
			if d.literal("null") {
				a.Actor = ActorRef{}
				return nil
			}
			return d.object(func(key string) error {
				switch key {
				case "kind":
					return d.str(&a.Actor.Kind)
				case "id":
					return d.str(&a.Actor.ID)
				}
				return d.skip()
			})
		}
		return d.skip()
	})
}

// decoder is a JSON scanner over one string; every string it returns is a
// substring of s unless it had escapes.
type decoder struct {
	s     string
	i     int
	depth int // objects and arrays open around the current position
}

func (d *decoder) syntax() error { return ErrSyntax }

// ws skips whitespace. NB: kept small enough to be inlined: in a Go-built
// guest every function call costs several nanoseconds.
func (d *decoder) ws() {
	for d.i < len(d.s) && d.s[d.i] <= ' ' && (d.s[d.i] == ' ' || d.s[d.i] == '\n' || d.s[d.i] == '\t' || d.s[d.i] == '\r') {
		d.i++
	}
}

func (d *decoder) peek() byte {
	if d.i < len(d.s) {
		return d.s[d.i]
	}
	return 0
}

func (d *decoder) end() error {
	d.ws()
	if d.i != len(d.s) {
		return d.syntax()
	}
	return nil
}

// literal consumes lit if it is next (whitespace already skipped).
func (d *decoder) literal(lit string) bool {
	if d.i < len(d.s) && d.s[d.i] == lit[0] && len(d.s)-d.i >= len(lit) && d.s[d.i:d.i+len(lit)] == lit {
		d.i += len(lit)
		return true
	}
	return false
}

// object parses an object, calling member with each key after consuming
// the colon and the whitespace before the value; member must consume the
// value. Like every container it counts toward maxDepth.
func (d *decoder) object(member func(key string) error) error {
	if d.depth >= maxDepth {
		return d.syntax()
	}
	d.depth++
	err := d.objectBody(member)
	d.depth--
	return err
}

func (d *decoder) objectBody(member func(key string) error) error {
	if d.peek() != '{' {
		return d.syntax()
	}
	d.i++
	d.ws()
	if d.peek() == '}' {
		d.i++
		return nil
	}
	for {
		d.ws()
		var key string
		if err := d.rawStr(&key); err != nil {
			return err
		}
		d.ws()
		if d.peek() != ':' {
			return d.syntax()
		}
		d.i++
		d.ws()
		if err := member(key); err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return nil
		default:
			return d.syntax()
		}
	}
}

// array parses an array, calling elem with the whitespace before each
// element skipped; elem must consume the element. Like every container it
// counts toward maxDepth.
func (d *decoder) array(elem func() error) error {
	if d.depth >= maxDepth {
		return d.syntax()
	}
	d.depth++
	err := d.arrayBody(elem)
	d.depth--
	return err
}

func (d *decoder) arrayBody(elem func() error) error {
	if d.peek() != '[' {
		return d.syntax()
	}
	d.i++
	d.ws()
	if d.peek() == ']' {
		d.i++
		return nil
	}
	for {
		d.ws()
		if err := elem(); err != nil {
			return err
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return nil
		default:
			return d.syntax()
		}
	}
}

// str decodes a string or null (which leaves *dst unchanged, as
// encoding/json does).
func (d *decoder) str(dst *string) error {
	if d.literal("null") {
		return nil
	}
	return d.rawStr(dst)
}

func (d *decoder) bool(dst *bool) error {
	switch {
	case d.literal("true"):
		*dst = true
	case d.literal("false"):
		*dst = false
	case d.literal("null"):
	default:
		return d.syntax()
	}
	return nil
}

func (d *decoder) int(dst *int) error {
	if d.literal("null") {
		return nil
	}
	start := d.i
	if err := d.number(); err != nil {
		return err
	}
	if n, ok := smallInt(d.s[start:d.i]); ok {
		*dst = n
		return nil
	}
	n, err := strconv.ParseInt(d.s[start:d.i], 10, strconv.IntSize)
	if err != nil {
		return d.syntax() // a fraction, an exponent or an overflow
	}
	*dst = int(n)
	return nil
}

// smallInt is the value of a JSON number of at most nine digits with no
// fraction or exponent (abi_version, every ordinary count), without
// strconv, which costs thousands of instructions a call in a Go-built
// guest; ok is false for anything else.
func smallInt(lit string) (n int, ok bool) {
	digits := lit
	if len(lit) > 0 && lit[0] == '-' {
		digits = lit[1:]
	}
	if len(digits) == 0 || len(digits) > 9 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if len(digits) < len(lit) {
		n = -n
	}
	return n, true
}

// rawStr decodes a JSON string (no null).
//
// NB: in a Go-built Wasm guest every branch goes through the function's
// dispatch table and a loop iteration costs tens of instructions, so the
// plain bytes are passed over eight at a time (scanPlain), not one at a time
// through a switch.
func (d *decoder) rawStr(dst *string) error {
	if d.peek() != '"' {
		return d.syntax()
	}
	s, start := d.s, d.i+1
	for i := start; ; {
		// scanPlain, written out: the call cost more than the scan of most
		// keys and values.
		for {
			if i > len(s)-8 {
				for i < len(s) && plainByte[s[i]] {
					i++
				}
				break
			}
			if m := specialBytes(load64(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			return d.syntax()
		}
		c := s[i]
		switch {
		case c == '"':
			*dst = s[start:i]
			d.i = i + 1
			return nil
		case c == '\\' || c < 0x20:
			return d.slowStr(dst, start)
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return d.slowStr(dst, start)
		}
		i += size
	}
}

// slowStr decodes a string with escapes or invalid UTF-8 as encoding/json
// does (invalid bytes and unpaired surrogates become U+FFFD).
func (d *decoder) slowStr(dst *string, start int) error {
	b := make([]byte, 0, 32)
	for i := start; i < len(d.s); {
		c := d.s[i]
		switch {
		case c == '"':
			*dst = string(b)
			d.i = i + 1
			return nil
		case c < 0x20:
			return d.syntax()
		case c == '\\':
			if i+1 >= len(d.s) {
				return d.syntax()
			}
			switch e := d.s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(d.s, i+2)
				if !ok {
					return d.syntax()
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(d.s, i+2); ok && i+1 < len(d.s) && d.s[i] == '\\' && d.s[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return d.syntax()
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(d.s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, d.s[i:i+size]...)
			}
			i += size
		}
	}
	return d.syntax()
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number consumes a JSON number.
func (d *decoder) number() error {
	s, i := d.s, d.i
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return d.syntax()
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return d.syntax()
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return d.syntax()
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	d.i = i
	return nil
}

// skip consumes and validates any JSON value.
func (d *decoder) skip() error {
	switch c := d.peek(); {
	case c == '{':
		return d.object(func(string) error { return d.skip() })
	case c == '[':
		return d.array(func() error { return d.skip() })
	case c == '"':
		return d.skipStr()
	case c == 't':
		if d.literal("true") {
			return nil
		}
	case c == 'f':
		if d.literal("false") {
			return nil
		}
	case c == 'n':
		if d.literal("null") {
			return nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	}
	return d.syntax()
}

// skipStr consumes a string without decoding it (invalid UTF-8 is accepted,
// as encoding/json accepts it). The scan is rawStr's.
func (d *decoder) skipStr() error {
	s := d.s
	for i := d.i + 1; ; {
		i = scanPlain(s, i)
		if i >= len(s) {
			return d.syntax()
		}
		switch c := s[i]; {
		case c == '"':
			d.i = i + 1
			return nil
		case c < 0x20:
			return d.syntax()
		case c == '\\':
			if i+1 >= len(s) {
				return d.syntax()
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(s, i+2); !ok {
					return d.syntax()
				}
				i += 6
			default:
				return d.syntax()
			}
		default: // not ASCII: taken as it is
			i++
		}
	}
}

// plainByte marks the bytes a string scan passes over: printable ASCII
// other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// scanPlain returns the index of the first byte of s from i on that is not
// a plainByte, or len(s): eight bytes a step, the position of the first
// special byte in a step from its mask, one byte a step only in the last
// seven bytes of s.
func scanPlain(s string, i int) int {
	for ; i <= len(s)-8; i += 8 {
		if m := specialBytes(load64(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	return i
}

// specialBytes has the high bit of the lowest byte of x (in memory order)
// that is not a plainByte set, and no lower bit; zero when all eight are
// plain. For v = x^c, (v-lowBits)&^v&highBits marks the lowest byte equal
// to c exactly (the borrow that may mark bytes above it starts there);
// x-0x20 in each byte marks the lowest byte below 0x20 (a byte above it may
// be marked too, and one from 0xA0 is marked anyway), x itself every byte
// from 0x80.
func specialBytes(x uint64) uint64 {
	quote := x ^ (lowBits * '"')
	backslash := x ^ (lowBits * '\\')
	return ((quote-lowBits)&^quote | (backslash-lowBits)&^backslash | (x - lowBits*0x20) | x) & highBits
}
