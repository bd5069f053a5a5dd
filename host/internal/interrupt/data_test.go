package interrupt

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/govhost/govhost/internal/wasmfixtures"
)

// dataSection returns the body of wasm's data section (nil when none).
func dataSection(t *testing.T, wasm []byte) []byte {
	t.Helper()
	r := reader{b: wasm, i: 8}
	for r.i < len(r.b) {
		id := r.byte()
		body := r.bytes(int(r.u32()))
		require.NoError(t, r.err)
		if id == secData {
			return body
		}
	}
	return nil
}

// applyData writes a data section's active segments into a zeroed memory of
// size bytes, as instantiation does; false when one falls outside it.
func applyData(t *testing.T, body []byte, size int) ([]byte, int, bool) {
	t.Helper()
	mem := make([]byte, size)
	r := reader{b: body}
	n := r.u32()
	for i := uint32(0); i < n; i++ {
		require.Equal(t, byte(0), r.byte())
		require.Equal(t, byte(opI32Const), r.byte())
		off := uint64(uint32(r.s32()))
		require.Equal(t, byte(opEnd), r.byte())
		data := r.bytes(int(r.u32()))
		require.NoError(t, r.err)
		if off+uint64(len(data)) > uint64(size) {
			return nil, int(n), false
		}
		copy(mem[off:], data)
	}
	require.Equal(t, len(body), r.i)
	return mem, int(n), true
}

// A Go-built module's tens of thousands of segments become a few dozen, and
// an instance starts with exactly the memory the original gives it.
func TestCoalesceData_GoBuiltSameMemory(t *testing.T) {
	ctx := context.Background()
	// NB: the interpreter: nothing to compile, only to instantiate.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	for _, name := range []string{"trivial_go.wasm"} {
		orig := wasmfixtures.Bytes(name)
		res, err := Instrument(orig, Options{MemoryCapBytes: 32 << 20})
		require.NoError(t, err)
		_, before, _ := applyData(t, dataSection(t, orig), 1<<26)
		_, after, _ := applyData(t, dataSection(t, res.Wasm), 1<<26)
		require.Greater(t, before, 1000, "%s: the Go toolchain writes many segments", name)
		require.Less(t, after*100, before, "%s: merged", name)

		memory := func(wasm []byte) []byte {
			cm, err := rt.CompileModule(ctx, wasm)
			require.NoError(t, err)
			defer cm.Close(ctx)
			// NB: no start function runs: the memory is what the data
			// segments wrote.
			m, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
			require.NoError(t, err)
			defer m.Close(ctx)
			view, ok := m.Memory().Read(0, m.Memory().Size())
			require.True(t, ok)
			return slices.Clone(view)
		}
		require.Equal(t, memory(orig), memory(res.Wasm), "%s: the instance's memory at start", name)
	}
}

// segs encodes a data section of active i32.const segments.
func segs(s ...struct {
	off  int32
	data string
}) []byte {
	out := appendU32(nil, uint32(len(s)))
	for _, x := range s {
		out = append(out, 0x00, opI32Const)
		out = appendS32(out, x.off)
		out = append(out, opEnd)
		out = appendU32(out, uint32(len(x.data)))
		out = append(out, x.data...)
	}
	return out
}

type seg = struct {
	off  int32
	data string
}

// What coalesceData leaves alone: every shape where merging could change
// what an instance sees or whether it instantiates.
func TestCoalesceData_Unchanged(t *testing.T) {
	cases := map[string][]byte{
		"one segment":           segs(seg{0, "ab"}),
		"overlapping":           segs(seg{0, "abcd"}, seg{2, "xy"}),
		"overlap, out of order": segs(seg{8, "abcd"}, seg{6, "xyz"}),
		"past 4 GiB":            segs(seg{0, "ab"}, seg{-1, "xy"}),
		"passive":               {2, 0x00, opI32Const, 0, opEnd, 1, 'a', 0x01, 1, 'b'},
		"memory index":          {2, 0x02, 0, opI32Const, 0, opEnd, 1, 'a', 0x00, opI32Const, 2, opEnd, 1, 'b'},
		"global.get":            {2, 0x00, 0x23, 0, opEnd, 1, 'a', 0x00, opI32Const, 2, opEnd, 1, 'b'},
		"padded LEB":            {2, 0x00, opI32Const, 0x80, 0x00, opEnd, 1, 'a', 0x00, opI32Const, 2, opEnd, 1, 'b'},
		"trailing":              append(segs(seg{0, "a"}, seg{2, "b"}), 0),
		"truncated":             segs(seg{0, "a"}, seg{2, "b"})[:9],
	}
	for name, body := range cases {
		got := coalesceData(body)
		require.Equal(t, body, got, name)
	}
}

// Random disjoint segments in random order: the same memory, far fewer
// segments, out of bounds exactly when the original is, and never more than
// about twice the input's size.
func TestCoalesceData_Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		var list []seg
		off := int32(rng.IntN(100))
		for range 1 + rng.IntN(200) {
			n := rng.IntN(8)
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(1 + rng.IntN(255))
			}
			list = append(list, seg{off, string(data)})
			off += int32(n + rng.IntN(3)*rng.IntN(100)) // gaps of 0 to ~200 bytes
		}
		rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
		body := segs(list...)
		got := coalesceData(body)
		require.LessOrEqual(t, len(got), 2*len(body)+16)
		for _, size := range []int{int(off) + 8, int(off) - 4} { // fits; the last segment is out
			want, _, wantOK := applyData(t, body, max(size, 0))
			have, _, haveOK := applyData(t, got, max(size, 0))
			require.Equal(t, wantOK, haveOK, "out of bounds alike (iteration %d, size %d)", iter, size)
			require.Equal(t, want, have, "same memory (iteration %d)", iter)
		}
	}
}

// A module with a data count section (which memory.init and data.drop need)
// keeps its segments as they are; without one, they are merged.
func TestInstrument_DataCountKeepsSegments(t *testing.T) {
	data := segs(seg{0, "ab"}, seg{4, "c"})
	module := func(dataCount bool) []byte {
		w := []byte("\x00asm\x01\x00\x00\x00")
		sec := func(id byte, body []byte) {
			w = append(w, id)
			w = appendU32(w, uint32(len(body)))
			w = append(w, body...)
		}
		sec(secType, []byte{1, 0x60, 0, 0})
		sec(secFunction, []byte{1, 0})
		sec(secMemory, []byte{1, 0, 1})
		if dataCount {
			sec(secDataCount, []byte{2})
		}
		sec(secCode, []byte{1, 2, 0, opEnd})
		sec(secData, data)
		return w
	}
	res, err := Instrument(module(true), Options{MemoryCapBytes: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, data, dataSection(t, res.Wasm))
	res, err = Instrument(module(false), Options{MemoryCapBytes: 1 << 20})
	require.NoError(t, err)
	require.Equal(t, segs(seg{0, "ab\x00\x00c"}), dataSection(t, res.Wasm))

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	_, err = rt.CompileModule(ctx, res.Wasm)
	require.NoError(t, err, "the merged module is valid")
}

// FuzzCoalesceData: on any bytes, coalesceData returns its input or a
// section that gives memory the same bytes, out of bounds exactly when the
// input is, never more than about twice as large.
func FuzzCoalesceData(f *testing.F) {
	f.Add(segs(seg{0, "ab"}, seg{4, "c"}))
	f.Add(segs(seg{40, "xyz"}, seg{0, "ab"}, seg{100, "q"}))
	f.Add(segs(seg{0, "abcd"}, seg{2, "xy"}))
	f.Add([]byte{2, 0x00, opI32Const, 0x80, 0x00, opEnd, 1, 'a', 0x00, opI32Const, 2, opEnd, 1, 'b'})
	f.Fuzz(func(t *testing.T, body []byte) {
		got := coalesceData(body)
		if bytes.Equal(got, body) {
			return
		}
		require.LessOrEqual(t, len(got), 2*len(body)+16)
		end := 0 // where the last segment ends
		r := reader{b: got}
		for n := r.u32(); n > 0; n-- {
			r.byte()
			r.byte()
			off := int(uint32(r.s32()))
			r.byte()
			end = max(end, off+len(r.bytes(int(r.u32()))))
		}
		require.NoError(t, r.err)
		if end > 1<<24 {
			return // too large to apply here
		}
		for _, size := range []int{end, max(end-1, 0)} {
			want, _, wantOK := applyData(t, body, size)
			have, _, haveOK := applyData(t, got, size)
			require.Equal(t, wantOK, haveOK, "out of bounds alike (size %d)", size)
			require.Equal(t, want, have, "same memory")
		}
	})
}
