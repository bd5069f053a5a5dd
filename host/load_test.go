package host_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
)

// Modules too big to commit are generated here: a native gate whose
// gate_evaluate body (and extra functions) are chosen by the test.

func leb(dst []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(dst, c)
		}
		dst = append(dst, c|0x80)
	}
}

func section(dst []byte, id byte, body []byte) []byte {
	dst = append(dst, id)
	dst = leb(dst, uint32(len(body)))
	return append(dst, body...)
}

func name(dst []byte, s string) []byte { return append(leb(dst, uint32(len(s))), s...) }

// generatedGate returns a native gate module whose gate_evaluate has the
// given local declarations and instructions (before its i64.const 0 answer),
// plus extra empty functions.
func generatedGate(localDecls []byte, instrs []byte, extra int) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = section(m, 1, []byte{4,
		0x60, 0, 1, 0x7f, // 0: () -> i32
		0x60, 1, 0x7f, 1, 0x7f, // 1: (i32) -> i32
		0x60, 2, 0x7f, 0x7f, 1, 0x7e, // 2: (i32 i32) -> i64
		0x60, 0, 0, // 3: () -> ()
	})
	funcs := leb(nil, uint32(3+extra))
	funcs = append(funcs, 0, 1, 2)
	for i := 0; i < extra; i++ {
		funcs = append(funcs, 3)
	}
	m = section(m, 3, funcs)
	m = section(m, 5, []byte{1, 0, 2})
	exports := []byte{4}
	exports = append(name(exports, abi.ExportMemory), 2, 0)
	exports = append(name(exports, abi.ExportABIVersion), 0, 0)
	exports = append(name(exports, abi.ExportAlloc), 0, 1)
	exports = append(name(exports, abi.ExportEvaluate), 0, 2)
	m = section(m, 7, exports)

	code := leb(nil, uint32(3+extra))
	fn := func(body []byte) {
		code = leb(code, uint32(len(body)))
		code = append(code, body...)
	}
	fn([]byte{0, 0x41, 1, 0x0b})
	fn([]byte{0, 0x41, 0x80, 0x08, 0x0b})
	eval := append(append([]byte(nil), localDecls...), instrs...)
	fn(append(eval, 0x42, 0, 0x0b))
	for i := 0; i < extra; i++ {
		fn([]byte{0, 0x0b})
	}
	return section(m, 10, code)
}

var noLocals = []byte{0}

func loops(n int) []byte { return bytes.Repeat([]byte{0x03, 0x40, 0x0b}, n) }

func nested(n int) []byte {
	return append(bytes.Repeat([]byte{0x02, 0x40}, n), bytes.Repeat([]byte{0x0b}, n)...)
}

func brTable(n int) []byte {
	b := []byte{0x02, 0x40, 0x41, 0x00, 0x0e}
	b = leb(b, uint32(n))
	b = append(b, bytes.Repeat([]byte{0}, n+1)...)
	return append(b, 0x0b)
}

// TestLoad_StructuralLimits: each structural limit refuses a generated
// module at load with its own code, in milliseconds (before compiling),
// including the 100 000 nested blocks and million-target br_table
// under the default limits; a module just within the limits loads.
func TestLoad_StructuralLimits(t *testing.T) {
	ctx := context.Background()
	tight := host.ModuleLimits{Functions: 50, Locals: 100, Nesting: 64, BranchTable: 1000, BodyBytes: 64 << 10}
	h, err := host.New(ctx, testConfig().WithModuleLimits(tight))
	require.NoError(t, err)
	defer h.Close(ctx)

	manyLocals := []byte{1, 0xe8, 0x07, 0x7f} // 1000 i32 locals
	for _, c := range []struct {
		name string
		h    *host.Host
		wasm []byte
		code string
	}{
		{"functions", h, generatedGate(noLocals, nil, 60), host.CodeTooManyFunctions},
		{"locals", h, generatedGate(manyLocals, nil, 0), host.CodeTooManyLocals},
		{"nesting", h, generatedGate(noLocals, nested(65), 0), host.CodeNestingTooDeep},
		{"br_table", h, generatedGate(noLocals, brTable(1001), 0), host.CodeBranchTableTooLarge},
		{"body size", h, generatedGate(noLocals, bytes.Repeat([]byte{0x01}, 70<<10), 0), host.CodeFunctionTooLarge},
		{"100 000 nested blocks, default limits", sharedHost(t), generatedGate(noLocals, nested(100_000), 0), host.CodeNestingTooDeep},
		{"br_table of a million targets, default limits", sharedHost(t), generatedGate(noLocals, brTable(1_000_000), 0), host.CodeBranchTableTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := c.h.Load(ctx, c.wasm, host.AnyDigest)
			t.Logf("%d bytes refused in %v", len(c.wasm), time.Since(start))
			var ge *host.GuestError
			require.ErrorAs(t, err, &ge)
			require.Equal(t, c.code, ge.Code)
			require.Equal(t, "load", ge.Op)
		})
	}

	m, err := h.Load(ctx, generatedGate([]byte{1, 90, 0x7f}, append(nested(60), brTable(900)...), 40), host.AnyDigest)
	require.NoError(t, err, "within every limit")
	g, err := h.Gate(ctx, m, nil)
	require.NoError(t, err)
	_, err = g.Evaluate(ctx, input("x"))
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge, "answers (0, 0): not JSON")
	require.Equal(t, host.CodeBadOutput, ge.Code)
}

// TestLoad_Timeout: a module that takes longer to compile than the load
// timeout is refused with gate.load_timeout at the timeout, not when wazero
// finishes; Close waits for the compilation that could not be stopped; a
// trusted load of the same module is not bounded.
func TestLoad_Timeout(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithLoadTimeout(time.Millisecond)) // no disk cache: it must compile
	require.NoError(t, err)
	wasm := generatedGate(noLocals, loops(500), 0)
	start := time.Now()
	_, err = h.Load(ctx, wasm, host.AnyDigest)
	refused := time.Since(start)
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeLoadTimeout, ge.Code)
	t.Logf("500 loops: refused after %v", refused)

	start = time.Now()
	m, err := h.LoadTrusted(ctx, wasm, host.AnyDigest)
	require.NoError(t, err, "trusted loads have no time bound")
	t.Logf("500 loops: trusted load in %v", time.Since(start))
	require.NotNil(t, m)

	dctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_, err = h.Load(dctx, generatedGate(noLocals, loops(501), 0), host.AnyDigest)
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeLoadTimeout, ge.Code, "the caller's deadline bounds Load too")

	start = time.Now()
	require.NoError(t, h.Close(ctx))
	t.Logf("Close waited %v for the compilation in the background", time.Since(start))
}
