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
	runs, ok := planData(body)
	if !ok {
		return body
	}
	return appendData(make([]byte, 0, dataSize(runs)), runs)
}

// dataRun is one merged segment: its offset and the input segments (slices
// of the input, not copies) it is made of, with the zero gaps between them
// implied by their offsets.
type dataRun struct {
	offset uint32
	end    uint64 // offset + merged length
	segs   []dataSegment
}

type dataSegment struct {
	offset uint32
	data   []byte
}

// planData decides coalesceData's merge without copying a byte of data:
// Instrument writes the merged section straight into its output
// (appendData), so a module's data is copied once however large it is (a
// 31 MiB data segment was copied three times over, and 32 concurrent loads
// of it ran the server out of memory). ok is false when body is not of the
// one shape coalesceData merges.
func planData(body []byte) (runs []dataRun, ok bool) {
	r := reader{b: body}
	n := r.u32()
	if r.err != nil || n < 2 || uint64(n) > uint64(len(body)) {
		return nil, false
	}
	segs := make([]dataSegment, 0, n)
	for i := uint32(0); i < n; i++ {
		if r.byte() != 0x00 || r.byte() != opI32Const {
			return nil, false
		}
		at := r.i
		v := r.s32()
		if r.err != nil || string(appendS32(nil, v)) != string(r.b[at:r.i]) || r.byte() != opEnd {
			return nil, false
		}
		data := r.bytes(int(r.u32()))
		off := uint64(uint32(v))
		if r.err != nil || off+uint64(len(data)) > 1<<32 {
			return nil, false
		}
		segs = append(segs, dataSegment{uint32(off), data})
	}
	if r.i != len(body) {
		return nil, false
	}
	slices.SortStableFunc(segs, func(a, b dataSegment) int { return cmp.Compare(a.offset, b.offset) })
	for i := 1; i < len(segs); i++ {
		if uint64(segs[i].offset) < uint64(segs[i-1].offset)+uint64(len(segs[i-1].data)) {
			return nil, false // overlapping: the order of application matters
		}
	}
	// NB: the zeros written are bounded by the input's size, so that a
	// module of many tiny segments cannot make the rewrite many times larger.
	budget := uint64(len(body))
	first := 0 // the index in segs of the last run's first segment
	for i, s := range segs {
		end := uint64(s.offset) + uint64(len(s.data))
		if k := len(runs) - 1; k >= 0 {
			last := &runs[k]
			if gap := uint64(s.offset) - last.end; gap <= maxDataGap && gap <= budget {
				budget -= gap
				last.segs, last.end = segs[first:i+1], end
				continue
			}
		}
		first = i
		runs = append(runs, dataRun{offset: s.offset, end: end, segs: segs[i : i+1]})
	}
	return runs, true
}

// dataSize is the size of the section body appendData writes for runs.
func dataSize(runs []dataRun) int {
	n := len(appendU32(nil, uint32(len(runs))))
	for _, run := range runs {
		length := run.end - uint64(run.offset)
		n += 2 + len(appendS32(nil, int32(run.offset))) + 1 + len(appendU32(nil, uint32(length))) + int(length)
	}
	return n
}

// appendData appends the data section body of runs to dst.
func appendData(dst []byte, runs []dataRun) []byte {
	dst = appendU32(dst, uint32(len(runs)))
	for _, run := range runs {
		dst = append(dst, 0x00, opI32Const)
		dst = appendS32(dst, int32(run.offset))
		dst = append(dst, opEnd)
		dst = appendU32(dst, uint32(run.end-uint64(run.offset)))
		at := uint64(run.offset)
		for _, s := range run.segs {
			dst = append(dst, make([]byte, uint64(s.offset)-at)...) // the gap's zeros
			dst = append(dst, s.data...)
			at = uint64(s.offset) + uint64(len(s.data))
		}
	}
	return dst
}
