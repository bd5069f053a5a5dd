package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/sdk/gatecases"
)

// The built-in modules' shadow stack (the part of linear memory where Rust
// keeps what does not fit in Wasm locals) is sized by the Makefile's link
// flags (-zstack-size). Every instance's linear memory starts with it, so
// it is memory each instance allocates, zeroes and holds: rustc's default
// of 1 MiB made each instance 1.1 MiB, most of it a stack no input comes
// near. The tests below hold a smaller stack to two promises: overflowing
// it traps (the stack lies below everything else, so a frame past its end
// leaves linear memory) and the deepest inputs the gates accept use at
// most a quarter of it.

// stackLayout is where a module's stack lies: [0, top), growing down from
// top, the initial value of its stack pointer (global 0, which wasm-ld
// makes the stack pointer), and where its data begins.
type stackLayout struct {
	top       uint32 // initial __stack_pointer
	dataStart uint32 // lowest data segment offset (MaxUint32: none)
	minPages  uint32
	// topAt, topLen: where the stack pointer's initial value is encoded
	// (a signed LEB128 of topLen bytes at wasm[topAt:]).
	topAt, topLen int
}

// readStackLayout reads a module's stack pointer, data segment offsets and
// memory minimum from its global, data and memory sections.
func readStackLayout(wasm []byte) (stackLayout, error) {
	l := stackLayout{dataStart: ^uint32(0)}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return l, errors.New("not a Wasm module")
	}
	var haveSP bool
	r := wasmReader{b: wasm, i: 8}
	for r.i < len(r.b) && r.err == nil {
		id := r.byte()
		size := r.u32()
		end := r.i + int(size)
		if r.err != nil || end > len(r.b) {
			return l, errors.New("truncated section")
		}
		switch id {
		case 5: // memory
			if r.u32() > 0 {
				flags := r.byte()
				l.minPages = r.u32()
				_ = flags
			}
		case 6: // global: the first one is wasm-ld's __stack_pointer
			if r.u32() > 0 {
				typ, mut := r.byte(), r.byte()
				if typ != 0x7f || mut != 1 || r.byte() != 0x41 {
					return l, errors.New("global 0 is not a mutable i32 set by i32.const")
				}
				l.topAt = r.i
				l.top = uint32(r.s32())
				l.topLen = r.i - l.topAt
				haveSP = true
			}
		case 11: // data
			for n := r.u32(); n > 0 && r.err == nil; n-- {
				switch flags := r.u32(); flags {
				case 0: // active, memory 0, offset expression
					if r.byte() != 0x41 {
						return l, errors.New("a data segment's offset is not an i32.const")
					}
					l.dataStart = min(l.dataStart, uint32(r.s32()))
					if r.byte() != 0x0b {
						return l, errors.New("a data segment's offset expression is not one constant")
					}
				case 1: // passive
				default:
					return l, errors.New("a data segment of an unexpected kind")
				}
				r.i += int(r.u32())
			}
		}
		r.i = end
	}
	if r.err != nil {
		return l, r.err
	}
	if !haveSP {
		return l, errors.New("no globals: no stack pointer")
	}
	return l, nil
}

// wasmReader reads LEB128 numbers; err sticks.
type wasmReader struct {
	b   []byte
	i   int
	err error
}

func (r *wasmReader) byte() byte {
	if r.i >= len(r.b) {
		r.err = errors.New("truncated module")
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *wasmReader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.err = errors.New("bad LEB128")
	return 0
}

func (r *wasmReader) s32() int32 {
	var v int64
	shift := 0
	for ; shift < 35; shift += 7 {
		c := r.byte()
		v |= int64(c&0x7f) << shift
		if c < 0x80 {
			if c&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return int32(v)
		}
	}
	r.err = errors.New("bad LEB128")
	return 0
}

// stackModules are the modules the stack tests check: the embedded ones,
// or those in $GOVHOST_STACK_GATES (a directory of <gate>.wasm, to measure
// a build before it is embedded).
func stackModules(t *testing.T) map[string][]byte {
	mods := map[string][]byte{}
	dir := os.Getenv("GOVHOST_STACK_GATES")
	for _, name := range builtin.Names() {
		if dir != "" {
			b, err := os.ReadFile(filepath.Join(dir, name+".wasm"))
			if err != nil {
				t.Fatal(err)
			}
			mods[name] = b
			continue
		}
		m, _ := builtin.Lookup(name)
		mods[name] = m.Wasm
	}
	return mods
}

// TestBuiltins_StackFirst: each built-in module keeps its stack at the
// bottom of linear memory, below every data segment, with the stack
// pointer starting at its top (wasm-ld's --stack-first, which rustc passes
// for wasm32). A frame pushed past the stack's end then has an address
// below 0, which wraps to near 4 GiB, outside any memory the host allows:
// the call traps (gate.trap, a deny) instead of writing over the module's
// data.
func TestBuiltins_StackFirst(t *testing.T) {
	for name, wasm := range stackModules(t) {
		l, err := readStackLayout(wasm)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if l.top == 0 || l.top%16 != 0 {
			t.Errorf("%s: stack pointer starts at %d: want the 16-aligned top of a stack", name, l.top)
		}
		if l.dataStart < l.top {
			t.Errorf("%s: data begins at %d, below the stack's top %d: the stack is not first", name, l.dataStart, l.top)
		}
		if uint64(l.minPages)*65536 < uint64(l.top) {
			t.Errorf("%s: memory of %d pages does not hold the stack (%d bytes)", name, l.minPages, l.top)
		}
		t.Logf("%s: stack %d bytes, data from %d, memory %d pages", name, l.top, l.dataStart, l.minPages)
	}
}

// withStackTop returns a copy of wasm whose stack pointer starts at top
// instead (as if linked with a stack of top bytes, the data where it was),
// encoded in the same number of bytes (LEB128 may be padded).
func withStackTop(t *testing.T, wasm []byte, l stackLayout, top uint32) []byte {
	out := append([]byte(nil), wasm...)
	v := top
	for k := 0; k < l.topLen; k++ {
		c := byte(v & 0x7f)
		v >>= 7
		if k < l.topLen-1 {
			c |= 0x80
		}
		out[l.topAt+k] = c
	}
	if v != 0 || top&(1<<(7*l.topLen-1)) != 0 {
		t.Fatalf("stack top %d does not fit %d LEB128 bytes", top, l.topLen)
	}
	return out
}

// TestBuiltins_StackOverflowTraps runs destructive with its stack cut to
// 2 KiB (the stack pointer starting there, the data where it was): a
// shallow input is answered as with the whole stack, while an input nested
// 512 deep (~25 KB of stack) traps, and neither writes anything between
// the cut stack's top and the data — an overflow stops the call, it does
// not run on over the module's memory.
func TestBuiltins_StackOverflowTraps(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	wasm := stackModules(t)["destructive"]
	l, err := readStackLayout(wasm)
	if err != nil {
		t.Fatal(err)
	}
	const cut = 2048
	doc := func(args string) []byte {
		in := abi.GateInput{ABIVersion: abi.Version, GateID: "destructive", Phase: abi.PhaseCheck, Tool: "bash",
			Operation: "execute_command", Arguments: json.RawMessage(args)}
		b, err := abi.AppendGateInput(nil, &in)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	shallow := doc(`{"command":"rm -rf /"}`)
	deep := doc(`{"command":"rm -rf /","x":` + strings.Repeat("[", 512) + strings.Repeat("]", 512) + `}`)
	run := func(wasm []byte, in []byte) (out []byte, err error, aboveCut []byte) {
		cm, cerr := rt.CompileModule(ctx, wasm)
		if cerr != nil {
			t.Fatal(cerr)
		}
		defer cm.Close(ctx)
		m, ierr := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
		if ierr != nil {
			t.Fatal(ierr)
		}
		defer m.Close(ctx)
		paint := make([]byte, l.top-cut)
		for i := range paint {
			paint[i] = stackPaint
		}
		m.Memory().Write(cut, paint)
		if code, _, err := bareCall(ctx, m, "gate_configure", []byte("{}")); err != nil || code != 0 {
			t.Fatalf("configure: %d %v", code, err)
		}
		_, out, err = bareCall(ctx, m, abi.ExportEvaluate, in)
		above, _ := m.Memory().Read(cut, l.top-cut)
		return out, err, bytes.Clone(above)
	}
	small := withStackTop(t, wasm, l, cut)
	want, err, _ := run(wasm, shallow)
	if err != nil {
		t.Fatal(err)
	}
	got, err, above := run(small, shallow)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("shallow input on a 2 KiB stack: %s (%v), want %s", got, err, want)
	}
	if !bytes.Equal(above, bytes.Repeat([]byte{stackPaint}, len(above))) {
		t.Fatal("a call wrote above its stack's top")
	}
	if _, err, _ := run(wasm, deep); err != nil {
		t.Fatalf("512 nested containers trap on the whole stack: %v", err)
	}
	got, err, above = run(small, deep)
	if err == nil {
		t.Fatalf("512 nested containers on a 2 KiB stack answered %s: want a trap", got)
	}
	if !bytes.Equal(above, bytes.Repeat([]byte{stackPaint}, len(above))) {
		t.Fatal("an overflowing call wrote above its stack's top")
	}
}

// stackPaint fills an unused stack so that the lowest byte a call changed
// shows how deep it went.
const stackPaint = 0xa5

// TestBuiltins_StackHeadroom runs each built-in module, bare on wazero,
// with its stack painted, over its case table and the deepest inputs it
// accepts — arguments nested to the reader's bound (10 000) and past it,
// destructive's 512 nested containers, shell lines nesting substitutions,
// long commands and paths — under each configuration of the regression
// fuzz, and requires the deepest stack any call used to be at most a
// quarter of the stack the module was linked with.
func TestBuiltins_StackHeadroom(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	configs := map[string][]string{
		"permission": regPermissionConfigs, "pathguard": regPathguardConfigs,
		"destructive": regDestructiveConfigs, "duties": regDutiesConfigs,
	}
	for name, wasm := range stackModules(t) {
		l, err := readStackLayout(wasm)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cm, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runs := map[string][][]byte{} // configuration → documents
		table, err := gatecases.LoadFile(filepath.Join("..", name, "testdata", "cases.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range table.Cases {
			in := gatecases.Input(c, name)
			doc, err := abi.AppendGateInput(nil, &in)
			if err != nil {
				t.Fatal(err)
			}
			config, _ := regCompact(c.Config)
			runs[string(config)] = append(runs[string(config)], doc)
		}
		deep := deepStackInputs(t, name)
		for _, config := range configs[name] {
			compact, ok := regCompact([]byte(config))
			if !ok {
				continue
			}
			runs[string(compact)] = append(runs[string(compact)], deep...)
		}
		var peak uint32
		calls, traps := 0, 0
		for config, docs := range runs {
			used, n, trapped := stackUse(t, ctx, rt, cm, l, []byte(config), docs)
			peak = max(peak, used)
			calls, traps = calls+n, traps+trapped
		}
		t.Logf("%s: deepest stack %d bytes of %d (%d calls, %d trapped)", name, peak, l.top, calls, traps)
		if peak > l.top/4 {
			t.Errorf("%s: an input used %d bytes of stack, more than a quarter of the %d the module has: raise -zstack-size in the Makefile", name, peak, l.top)
		}
	}
}

// stackUse configures one instance of cm with config, runs docs through
// it (a fresh instance after a trap) and returns the deepest stack any
// call used, the calls made and how many trapped.
func stackUse(t *testing.T, ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, l stackLayout, config []byte, docs [][]byte) (peak uint32, calls, traps int) {
	var m api.Module
	// NB: the paint only ever wears away, so one look at an instance's
	// stack, when it is done with, sees the deepest of its calls.
	done := func() {
		peak = max(peak, paintedDepth(m, l))
		m.Close(ctx)
		m = nil
	}
	fresh := func() bool {
		var err error
		if m, err = rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize")); err != nil {
			t.Fatal(err)
		}
		paint := make([]byte, l.top)
		for i := range paint {
			paint[i] = stackPaint
		}
		m.Memory().Write(0, paint)
		code, _, err := bareCall(ctx, m, "gate_configure", config)
		if err != nil || code != 0 {
			done()
			return false
		}
		return true
	}
	if !fresh() {
		return peak, 1, 0
	}
	for _, doc := range docs {
		_, _, err := bareCall(ctx, m, abi.ExportEvaluate, doc)
		calls++
		if err != nil {
			traps++
			done()
			if !fresh() {
				return peak, calls, traps
			}
		}
	}
	done()
	return peak, calls, traps
}

// paintedDepth is how far below the stack's top calls have written.
func paintedDepth(m api.Module, l stackLayout) uint32 {
	stack, _ := m.Memory().Read(0, l.top)
	for i, c := range stack {
		if c != stackPaint {
			return l.top - uint32(i)
		}
	}
	return 0
}

// deepStackInputs are the inputs that go deepest into a gate: nesting at
// and past each bound its readers keep, and long lines.
func deepStackInputs(t *testing.T, gate string) [][]byte {
	nested := func(depth int, open, leaf, close string) json.RawMessage {
		return json.RawMessage(`{"command":"rm -rf /","x":` + strings.Repeat(open, depth) + leaf + strings.Repeat(close, depth) + `}`)
	}
	var args []json.RawMessage
	for _, d := range []int{64, 65, 512, 513, 9999, 10001} {
		args = append(args, nested(d, `[`, `1`, `]`), nested(d, `{"a":`, `"x"`, `}`), nested(d, `[{"b":`, `null`, `}]`))
	}
	subst := func(depth int) string {
		return strings.Repeat("echo $(", depth) + "rm -rf /" + strings.Repeat(")", depth)
	}
	lines := append([]string(nil), regShellLines...)
	for _, d := range []int{8, 9, 100} {
		lines = append(lines, subst(d), strings.Repeat("`echo ", d)+"rm -rf /"+strings.Repeat("`", d),
			strings.Repeat(`bash -c "`, d)+"rm -rf /"+strings.Repeat(`"`, d), strings.Repeat("(", d)+"git push --force"+strings.Repeat(")", d))
	}
	lines = append(lines, strings.Repeat("ls -la src && ", 500)+"rm -rf /", strings.Repeat("a", 1<<14),
		strings.Repeat("echo 'x' \"y\" | ", 300)+"sh", strings.Repeat("DROP TABLE t; ", 200))
	for _, mode := range []uint8{0, 1, 3} { // plain, \u-escaped, among other members
		for _, line := range lines {
			args = append(args, regCommandArguments(line, mode))
		}
	}
	path := strings.Repeat("/a", 2000)
	paths := []abi.PathFact{
		{Arg: "path", Raw: path[1:], Resolved: "/tmp/w" + path, Kind: abi.PathKindMissing, NearestExisting: "/tmp/w"},
		{Arg: "file_path", Raw: strings.Repeat("../", 2000) + "etc/passwd", Resolved: "/etc/passwd", Kind: abi.PathKindFile, Link: true},
		{Arg: "path", Raw: strings.Repeat("x", 1<<16), Resolved: "/tmp/w/" + strings.Repeat("x", 1<<16), Kind: abi.PathKindMissing, NearestExisting: "/tmp/w"},
	}
	actor := &abi.ActorRef{Kind: "agent", ID: "coder"}
	var assignments []abi.Assignment
	for i := 0; i < 200; i++ {
		assignments = append(assignments, abi.Assignment{Actor: *actor, Duty: "duty" + strings.Repeat("x", i%50)})
	}
	var docs [][]byte
	for _, tool := range []string{"bash", "editor", "merge"} {
		for i, a := range args {
			in := abi.GateInput{ABIVersion: abi.Version, GateID: gate, Phase: abi.PhaseCheck, Tool: tool, Operation: "execute_command",
				Action: "run", Arguments: a, Cwd: "/tmp/w", Paths: paths[i%len(paths) : i%len(paths)+1],
				Context: abi.OperationInfo{OperationID: "op", Actor: actor, Assignments: &assignments}}
			if doc, err := abi.AppendGateInput(nil, &in); err == nil { // NB: some raw spellings are not JSON
				docs = append(docs, doc)
			}
		}
	}
	return docs
}
