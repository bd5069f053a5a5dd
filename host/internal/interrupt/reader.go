package interrupt

import "fmt"

// reader decodes the binary format; the first error sticks and later reads
// return zero values.
type reader struct {
	b   []byte
	i   int
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: malformed %s at byte %d", ErrUnsupported, what, r.i)
	}
	r.i = len(r.b)
}

func (r *reader) byte() byte {
	if r.i >= len(r.b) {
		r.fail("byte")
		return 0
	}
	c := r.b[r.i]
	r.i++
	return c
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b)-r.i {
		r.fail("vector")
		return nil
	}
	b := r.b[r.i : r.i+n]
	r.i += n
	return b
}

// leb reads an LEB128 number of at most max bytes, returning its unsigned
// value (low 64 bits).
func (r *reader) leb(max int) uint64 {
	var v uint64
	for shift, n := uint(0), 0; ; shift, n = shift+7, n+1 {
		if n >= max {
			r.fail("LEB128")
			return 0
		}
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) u32() uint32 { return uint32(r.leb(5)) }

// s32 reads a signed LEB128 i32 (an i32.const immediate).
func (r *reader) s32() int32 {
	var v int64
	var shift uint
	for n := 0; n < 5; n++ {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v |= -1 << shift
			}
			return int32(v)
		}
	}
	r.fail("LEB128")
	return 0
}
func (r *reader) s64() { r.leb(10) }

// valTypes reads a vector of value types and returns its bytes.
func (r *reader) valTypes() []byte {
	n := r.u32()
	start := r.i
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.valType()
	}
	if r.err != nil {
		return nil
	}
	return r.b[start:r.i]
}

func (r *reader) valType() {
	switch c := r.byte(); c {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f, 0x69: // i32 i64 f32 f64 v128 funcref externref exnref
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%w: value type %#x", ErrUnsupported, c)
		}
	}
}

func (r *reader) refType() {
	switch c := r.byte(); c {
	case 0x70, 0x6f, 0x69:
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%w: reference type %#x", ErrUnsupported, c)
		}
	}
}

func (r *reader) limits() {
	flags := r.byte()
	if flags > 0x07 {
		r.fail("limits")
		return
	}
	r.leb(10)
	if flags&0x01 != 0 {
		r.leb(10)
	}
}

func (r *reader) blockType() {
	if r.i >= len(r.b) {
		r.fail("block type")
		return
	}
	switch c := r.b[r.i]; c {
	case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f, 0x69:
		r.i++
	default:
		r.leb(5) // s33 type index
	}
}

func (r *reader) memarg() {
	align := r.u32()
	if align&0x40 != 0 { // multi-memory: a memory index follows
		r.u32()
	}
	r.leb(10)
}

// prefixFC skips the immediates of the 0xFC-prefixed instruction sub.
func (r *reader) prefixFC(sub uint32) {
	switch {
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init
		r.u32()
		r.u32()
	case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17: // data.drop, elem.drop, table.grow/size/fill
		r.u32()
	case sub == 10 || sub == 12 || sub == 14: // memory.copy, table.init, table.copy
		r.u32()
		r.u32()
	case sub == 11: // memory.fill
		r.u32()
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%w: 0xfc %d", ErrUnsupported, sub)
		}
	}
}

// prefixFD skips the immediates of a SIMD instruction.
func (r *reader) prefixFD() {
	switch sub := r.u32(); {
	case sub <= 11 || sub == 92 || sub == 93: // loads, stores, load_zero
		r.memarg()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle
		r.bytes(16)
	case sub >= 21 && sub <= 34: // extract/replace lane
		r.byte()
	case sub >= 84 && sub <= 91: // load/store lane
		r.memarg()
		r.byte()
	case sub <= 0x113: // no immediates
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%w: 0xfd %d", ErrUnsupported, sub)
		}
	}
}

func appendU32(dst []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(dst, c)
		}
		dst = append(dst, c|0x80)
	}
}

// appendS32 appends v as a signed LEB128 (i32.const immediates).
func appendS32(dst []byte, v int32) []byte { return appendS64(dst, int64(v)) }

// appendS64 appends v as a signed LEB128 (i64.const immediates, s33 block
// type indices).
func appendS64(dst []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(dst, c)
		}
		dst = append(dst, c|0x80)
	}
}

// lenU32 returns how many bytes the LEB128 u32 at the start of b takes.
func lenU32(b []byte) int {
	for i, c := range b {
		if c&0x80 == 0 {
			return i + 1
		}
	}
	return len(b)
}

// constExpr skips a constant expression (a global's initializer).
func (r *reader) constExpr() error {
	for r.err == nil {
		switch op := r.byte(); op {
		case 0x0b:
			return nil
		case 0x41, 0x42:
			r.s64()
		case 0x43:
			r.bytes(4)
		case 0x44:
			r.bytes(8)
		case 0x23, 0xd2: // global.get, ref.func
			r.u32()
		case 0xd0:
			r.refType()
		case 0xfd: // v128.const
			if r.u32() != 12 {
				return fmt.Errorf("%w: constant expression", ErrUnsupported)
			}
			r.bytes(16)
		default:
			return fmt.Errorf("%w: constant expression opcode %#x", ErrUnsupported, op)
		}
	}
	return r.err
}
