package wasmfixtures

import "encoding/binary"

// BigDataGate returns a valid native-ABI gate that always allows and carries
// one data segment of dataBytes bytes (filled from seed, so that different
// seeds are different modules with different digests): the load bomb of
// issue 28, a module whose compile costs memory in proportion to its data,
// not its code. Its memory is as small as the segment allows (the segment
// starts at 256 KiB; the host's default cap of 512 pages holds a segment of
// up to 31.75 MiB). It is built here, not committed, because it is as large
// as an upload may be.
func BigDataGate(dataBytes int, seed byte) []byte {
	const bigAt = 256 << 10
	pages := uint32((bigAt + dataBytes + 65535) / 65536)
	answer := []byte(`{"decision":"allow","reason_code":"allow.ok"}`)

	var out []byte
	out = append(out, 0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00)
	section := func(id byte, body []byte) {
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	// types: () -> i32, (i32) -> i32, (i32 i32) -> i64
	section(1, []byte{3, 0x60, 0, 1, 0x7f, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 2, 0x7f, 0x7f, 1, 0x7e})
	section(3, []byte{3, 0, 1, 2})
	section(5, binary.AppendUvarint([]byte{1, 0x00}, uint64(pages)))
	var exports []byte
	exports = append(exports, 4)
	export := func(name string, kind byte, idx byte) {
		exports = append(exports, byte(len(name)))
		exports = append(exports, name...)
		exports = append(exports, kind, idx)
	}
	export("memory", 0x02, 0)
	export("gate_abi_version", 0x00, 0)
	export("gate_alloc", 0x00, 1)
	export("gate_evaluate", 0x00, 2)
	section(7, exports)
	var code []byte
	code = append(code, 3)
	body := func(b ...byte) {
		code = append(code, byte(len(b)+1), 0) // size, no locals
		code = append(code, b...)
	}
	body(0x41, 0x01, 0x0b)                   // i32.const 1
	body(0x41, 0x80, 0x80, 0x04, 0x0b)       // i32.const 65536: one input buffer at 64 KiB
	ret := uint64(1024)<<32 | uint64(len(answer)) // the answer at 1024
	b := []byte{0x42}
	b = appendSLEB(b, int64(ret))
	body(append(b, 0x0b)...)
	section(10, code)
	var data []byte
	data = append(data, 2)
	segment := func(at uint32, payload []byte) {
		data = append(data, 0x00, 0x41)
		data = appendSLEB(data, int64(int32(at)))
		data = append(data, 0x0b)
		data = binary.AppendUvarint(data, uint64(len(payload)))
		data = append(data, payload...)
	}
	segment(1024, answer)
	big := make([]byte, dataBytes)
	x := uint32(seed)*2654435761 + 1
	for i := range big {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		big[i] = byte(x)
	}
	segment(bigAt, big)
	section(11, data)
	return out
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
