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
	return buildGate(`{"decision":"allow","reason_code":"allow.ok"}`, "", dataBytes, seed)
}

// AnswerGate returns a valid native-ABI gate that answers every call with
// answer (a GateOutput document) and, when describe is not empty, exports
// gate_describe returning it.
func AnswerGate(answer, describe string) []byte {
	return buildGate(answer, describe, 0, 0)
}

func buildGate(answerText, describeText string, dataBytes int, seed byte) []byte {
	const bigAt = 256 << 10
	pages := uint32((bigAt + dataBytes + 65535) / 65536)
	answer := []byte(answerText)

	var out []byte
	out = append(out, 0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00)
	section := func(id byte, body []byte) {
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	nfuncs := byte(3)
	if describeText != "" {
		nfuncs = 4
	}
	// types: () -> i32, (i32) -> i32, (i32 i32) -> i64, () -> i64
	section(1, []byte{4, 0x60, 0, 1, 0x7f, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 2, 0x7f, 0x7f, 1, 0x7e, 0x60, 0, 1, 0x7e})
	funcs := []byte{nfuncs, 0, 1, 2}
	if describeText != "" {
		funcs = append(funcs, 3)
	}
	section(3, funcs)
	section(5, binary.AppendUvarint([]byte{1, 0x00}, uint64(pages)))
	var exports []byte
	exports = append(exports, nfuncs+1)
	export := func(name string, kind byte, idx byte) {
		exports = append(exports, byte(len(name)))
		exports = append(exports, name...)
		exports = append(exports, kind, idx)
	}
	export("memory", 0x02, 0)
	export("gate_abi_version", 0x00, 0)
	export("gate_alloc", 0x00, 1)
	export("gate_evaluate", 0x00, 2)
	if describeText != "" {
		export("gate_describe", 0x00, 3)
	}
	section(7, exports)
	var code []byte
	code = append(code, nfuncs)
	body := func(b ...byte) {
		code = binary.AppendUvarint(code, uint64(len(b)+1))
		code = append(code, 0) // no locals
		code = append(code, b...)
	}
	packed := func(at, n int) []byte {
		b := []byte{0x42}
		b = appendSLEB(b, int64(uint64(at)<<32|uint64(n)))
		return append(b, 0x0b)
	}
	// The answer at 1024, the description after it, the input at 64 KiB.
	describeOffset := 1024 + len(answer)
	body(0x41, 0x01, 0x0b)             // i32.const 1
	body(0x41, 0x80, 0x80, 0x04, 0x0b) // i32.const 65536
	body(packed(1024, len(answer))...)
	if describeText != "" {
		body(packed(describeOffset, len(describeText))...)
	}
	section(10, code)
	var data []byte
	nseg := byte(1)
	if describeText != "" {
		nseg++
	}
	if dataBytes > 0 {
		nseg++
	}
	data = append(data, nseg)
	segment := func(at uint32, payload []byte) {
		data = append(data, 0x00, 0x41)
		data = appendSLEB(data, int64(int32(at)))
		data = append(data, 0x0b)
		data = binary.AppendUvarint(data, uint64(len(payload)))
		data = append(data, payload...)
	}
	segment(1024, answer)
	if describeText != "" {
		segment(uint32(describeOffset), []byte(describeText))
	}
	if dataBytes > 0 {
		big := make([]byte, dataBytes)
		x := uint32(seed)*2654435761 + 1
		for i := range big {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			big[i] = byte(x)
		}
		segment(bigAt, big)
	}
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
