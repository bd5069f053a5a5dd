package interrupt

import (
	"cmp"
	"slices"
)

// maxDataGap is the largest run of zero bytes coalesceData writes between
// two data segments to make them one.
const maxDataGap = 64

// coalesceData returns the data section body with its segments sorted by
// offset and neighbours merged into one, the zero bytes between them written
// out, or body unchanged when it is not of the one shape where that changes
// nothing an instance can observe: every segment active on memory 0 at an
// i32.const offset (encoded canonically), no two overlapping, each ending
// within 4 GiB. The caller makes sure no instruction names a segment by
// index (memory.init, data.drop) and that there is no data count section,
// since merging renumbers segments.
//
// Why? The Go toolchain writes a module's data as tens of thousands of small
// segments (one per run of non-zero bytes: 39 774 in the permission gate,
// 18 bytes apart). wazero decodes each into its own allocation, keeps a
// slice header per segment per instance and evaluates each offset at every
// instantiation; a few dozen segments cost a fraction of that.
//
// Why is it the same module? Segments that do not overlap give memory the
// same bytes in any order; memory no segment covers is zero when an
// instance starts, so a gap's zeros change no byte (sorted and disjoint, no
// other segment lies in a gap); and instantiation fails when some segment
// ends past memory, which a merged run does exactly when one of its
// segments did (it ends where its last one ends).
func coalesceData(body []byte) []byte {
	type segment struct {
		offset uint32
		data   []byte
	}
	r := reader{b: body}
	n := r.u32()
	if r.err != nil || n < 2 || uint64(n) > uint64(len(body)) {
		return body
	}
	segs := make([]segment, 0, n)
	for i := uint32(0); i < n; i++ {
		if r.byte() != 0x00 || r.byte() != opI32Const {
			return body
		}
		at := r.i
		v := r.s32()
		if r.err != nil || string(appendS32(nil, v)) != string(r.b[at:r.i]) || r.byte() != opEnd {
			return body
		}
		data := r.bytes(int(r.u32()))
		off := uint64(uint32(v))
		if r.err != nil || off+uint64(len(data)) > 1<<32 {
			return body
		}
		segs = append(segs, segment{uint32(off), data})
	}
	if r.i != len(body) {
		return body
	}
	slices.SortStableFunc(segs, func(a, b segment) int { return cmp.Compare(a.offset, b.offset) })
	for i := 1; i < len(segs); i++ {
		if uint64(segs[i].offset) < uint64(segs[i-1].offset)+uint64(len(segs[i-1].data)) {
			return body // overlapping: the order of application matters
		}
	}
	var runs []segment
	// NB: the zeros written are bounded by the input's size, so that a
	// module of many tiny segments cannot make the rewrite many times larger.
	budget := uint64(len(body))
	for _, s := range segs {
		if k := len(runs) - 1; k >= 0 {
			last := &runs[k]
			if gap := uint64(s.offset) - (uint64(last.offset) + uint64(len(last.data))); gap <= maxDataGap && gap <= budget {
				budget -= gap
				last.data = append(last.data, make([]byte, gap)...)
				last.data = append(last.data, s.data...)
				continue
			}
		}
		// NB: a copy, so that appending to a run never writes into body.
		runs = append(runs, segment{s.offset, append([]byte(nil), s.data...)})
	}
	out := appendU32(make([]byte, 0, len(body)), uint32(len(runs)))
	for _, s := range runs {
		out = append(out, 0x00, opI32Const)
		out = appendS32(out, int32(s.offset))
		out = append(out, opEnd)
		out = appendU32(out, uint32(len(s.data)))
		out = append(out, s.data...)
	}
	return out
}
