// Package interrupt makes a Wasm module stoppable cheaply: it rewrites the
// module so that every loop header counts down a budget and, every Budget
// iterations, visits Go (so the Go runtime can preempt the goroutine) and
// reads a new mutable i32 global (exported as GlobalName), trapping when it
// is non-zero. The host sets the global from another goroutine when a
// call's deadline passes or its context ends.
//
// Why not wazero's WithCloseOnContextDone? It makes every loop iteration
// leave native code to check the module's state in Go (tens of nanoseconds
// each) and starts a goroutine per call: a Go-built guest, whose runtime and
// libraries loop constantly, ran about 10× slower a call under it here. A
// counter per iteration and a visit to Go per Budget iterations cost about
// nothing. A guest cannot run without
// passing loop headers except by recursing, which ends in a stack overflow
// trap, or inside a host function, and the host's WASI functions do not
// block (no stdin, a fake clock whose sleeps return at once).
//
// Instrument handles core Wasm 2.0 with SIMD, bulk memory, reference types,
// tail calls and exception handling; anything else is refused with an error,
// and the host then falls back to wazero's mechanism.
package interrupt

import (
	"errors"
	"fmt"
)

// GlobalName is the export name of the interrupt flag.
const GlobalName = "__govhost_interrupt"

// ErrUnsupported is returned for modules Instrument does not rewrite.
var ErrUnsupported = errors.New("interrupt: module not instrumentable")

const (
	secImport = 2
	secGlobal = 6
	secExport = 7
	secCode   = 10
)

// Instrument returns a copy of wasm with the interrupt check inserted at
// every loop header. The input must be a module that wazero has validated
// (so that no instruction can name the new global).
func Instrument(wasm []byte) ([]byte, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || wasm[4] != 1 || wasm[5] != 0 || wasm[6] != 0 || wasm[7] != 0 {
		return nil, fmt.Errorf("%w: not a core Wasm 1 binary", ErrUnsupported)
	}
	type section struct {
		id   byte
		body []byte
	}
	var sections []section
	r := reader{b: wasm, i: 8}
	for r.i < len(r.b) {
		id := r.byte()
		size := r.u32()
		body := r.bytes(int(size))
		if r.err != nil {
			return nil, r.err
		}
		sections = append(sections, section{id, body})
	}

	// Count globals: imported ones first, then defined ones.
	var nGlobals uint32
	for _, s := range sections {
		switch s.id {
		case secImport:
			n, err := countGlobalImports(s.body)
			if err != nil {
				return nil, err
			}
			nGlobals += n
		case secGlobal:
			sr := reader{b: s.body}
			nGlobals += sr.u32()
			if sr.err != nil {
				return nil, sr.err
			}
		}
	}
	flag, budget := nGlobals, nGlobals+1 // indices of the new globals

	out := append(make([]byte, 0, len(wasm)+len(wasm)/16), wasm[:8]...)
	emit := func(id byte, body []byte) {
		out = append(out, id)
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	newGlobals := []byte{
		0x7f, 0x01, 0x41, 0x00, 0x0b, // flag: mut i32 = 0
		0x7f, 0x01, 0x41, 0x00, 0x0b, // budget: mut i32 = 0 (the first loop header refills it)
	}
	globalDone, exportDone := false, false
	// sectionRank orders sections as the binary format requires.
	rank := map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}
	for _, s := range sections {
		if s.id != 0 && !globalDone && rank[s.id] > rank[secGlobal] {
			emit(secGlobal, append(appendU32(nil, 2), newGlobals...))
			globalDone = true
		}
		if s.id != 0 && !exportDone && rank[s.id] > rank[secExport] {
			emit(secExport, appendExport(appendU32(nil, 1), flag))
			exportDone = true
		}
		switch s.id {
		case secGlobal:
			sr := reader{b: s.body}
			n := sr.u32()
			body := appendU32(nil, n+2)
			body = append(body, sr.b[sr.i:]...)
			emit(secGlobal, append(body, newGlobals...))
			globalDone = true
		case secExport:
			body, err := addExport(s.body, flag)
			if err != nil {
				return nil, err
			}
			emit(secExport, body)
			exportDone = true
		case secCode:
			body, err := instrumentCode(s.body, flag, budget)
			if err != nil {
				return nil, err
			}
			emit(secCode, body)
		default:
			emit(s.id, s.body)
		}
	}
	if !globalDone {
		emit(secGlobal, append(appendU32(nil, 2), newGlobals...))
	}
	if !exportDone {
		emit(secExport, appendExport(appendU32(nil, 1), flag))
	}
	return out, nil
}

func appendExport(dst []byte, global uint32) []byte {
	dst = appendU32(dst, uint32(len(GlobalName)))
	dst = append(dst, GlobalName...)
	dst = append(dst, 0x03) // global
	return appendU32(dst, global)
}

func addExport(body []byte, global uint32) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.bytes(int(r.u32()))
		r.byte()
		r.u32()
		if string(name) == GlobalName {
			return nil, fmt.Errorf("%w: export %s already exists", ErrUnsupported, GlobalName)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	out := appendU32(nil, n+1)
	out = append(out, body[lenU32(body):]...)
	return appendExport(out, global), nil
}

func countGlobalImports(body []byte) (uint32, error) {
	r := reader{b: body}
	n := r.u32()
	var globals uint32
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.bytes(int(r.u32())) // module
		r.bytes(int(r.u32())) // name
		switch kind := r.byte(); kind {
		case 0x00: // func
			r.u32()
		case 0x01: // table
			r.refType()
			r.limits()
		case 0x02: // memory
			r.limits()
		case 0x03: // global
			r.valType()
			r.byte()
			globals++
		case 0x04: // tag
			r.byte()
			r.u32()
		default:
			return 0, fmt.Errorf("%w: import kind %#x", ErrUnsupported, kind)
		}
	}
	return globals, r.err
}

// Budget is how many loop iterations run between two visits to Go.
const Budget = 1024

// loopCheck returns the code inserted at every loop header:
//
//	budget := budget - 1
//	if budget <= 0 {
//		budget = Budget
//		if flag != 0 { unreachable }
//		drop(memory.grow(0))
//	}
//
// NB: memory.grow leaves native code for Go in wazero. Without a visit to
// Go now and then, a guest spinning in native code could never be
// preempted, and a garbage collection elsewhere in the process would wait
// for it (stop the world) forever, timers included. The flag is read at the
// same moment, so an interrupt lands within Budget iterations.
func loopCheck(flag, budget uint32) []byte {
	c := appendU32([]byte{0x23}, budget) // global.get budget
	c = append(c, 0x41, 0x7f, 0x6a)      // i32.const -1; i32.add
	c = appendU32(append(c, 0x24), budget)
	c = appendU32(append(c, 0x23), budget)
	c = append(c, 0x41, 0x00, 0x4c, 0x04, 0x40) // i32.const 0; i32.le_s; if
	c = appendU32(append(c, 0x41), Budget)      // i32.const Budget (LEB128 of a positive s32)
	c = appendU32(append(c, 0x24), budget)      // global.set budget
	c = appendU32(append(c, 0x23), flag)        // global.get flag
	c = append(c, 0x04, 0x40, 0x00, 0x0b)       // if; unreachable; end
	c = append(c, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0; memory.grow 0; drop
	return append(c, 0x0b)                      // end
}

// instrumentCode rewrites the code section.
func instrumentCode(body []byte, flag, budget uint32) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	out := appendU32(make([]byte, 0, len(body)+len(body)/8), n)
	check := loopCheck(flag, budget)
	var fn []byte
	for i := uint32(0); i < n; i++ {
		size := r.u32()
		code := r.bytes(int(size))
		if r.err != nil {
			return nil, r.err
		}
		var err error
		if fn, err = instrumentFunc(fn[:0], code, flag, check); err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	if r.i != len(r.b) {
		return nil, fmt.Errorf("%w: trailing bytes in code section", ErrUnsupported)
	}
	return out, nil
}

// instrumentFunc copies one function body, inserting check after every
// loop's block type.
func instrumentFunc(dst, code []byte, flag uint32, check []byte) ([]byte, error) {
	r := reader{b: code}
	groups := r.u32()
	for g := uint32(0); g < groups && r.err == nil; g++ {
		r.u32()
		r.valType()
	}
	last := 0 // copied up to here
	depth := 1
	for depth > 0 {
		if r.err != nil {
			return nil, r.err
		}
		if r.i >= len(r.b) {
			return nil, fmt.Errorf("%w: function body ends early", ErrUnsupported)
		}
		op := r.byte()
		switch {
		case op == 0x02 || op == 0x04 || op == 0x06: // block, if, try (legacy)
			r.blockType()
			depth++
		case op == 0x03: // loop
			r.blockType()
			depth++
			dst = append(dst, r.b[last:r.i]...)
			dst = append(dst, check...)
			last = r.i
		case op == 0x1f: // try_table
			r.blockType()
			for c, n := uint32(0), r.u32(); c < n && r.err == nil; c++ {
				switch kind := r.byte(); kind {
				case 0x00, 0x01: // catch, catch_ref: tag, label
					r.u32()
					r.u32()
				case 0x02, 0x03: // catch_all, catch_all_ref: label
					r.u32()
				default:
					return nil, fmt.Errorf("%w: catch kind %#x", ErrUnsupported, kind)
				}
			}
			depth++
		case op == 0x0b: // end
			depth--
		case op == 0x05 || op == 0x07 || op == 0x19: // else, catch (u32 follows for catch), catch_all
			if op == 0x07 {
				r.u32()
			}
		case op == 0x18: // delegate: ends a try
			r.u32()
			depth--
		case op == 0x00 || op == 0x01 || op == 0x0f || op == 0x0a || op == 0x1a || op == 0x1b || op == 0xd1:
			// unreachable, nop, return, throw_ref, drop, select, ref.is_null
		case op == 0x0c || op == 0x0d || op == 0x10 || op == 0x12 || op == 0x08 || op == 0x09 || op == 0xd2 ||
			(op >= 0x20 && op <= 0x22) || op == 0x25 || op == 0x26 || op == 0x3f || op == 0x40:
			// br, br_if, call, return_call, throw, rethrow, ref.func,
			// local.*, table.get/set, memory.size/grow: one u32
			r.u32()
		case op == 0x23 || op == 0x24: // global.get/set
			if g := r.u32(); g >= flag {
				return nil, fmt.Errorf("%w: global index out of range", ErrUnsupported)
			}
		case op == 0x0e: // br_table
			for t, n := uint32(0), r.u32(); t <= n && r.err == nil; t++ {
				r.u32()
			}
		case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
			r.u32()
			r.u32()
		case op == 0x1c: // select t*
			for t, n := uint32(0), r.u32(); t < n && r.err == nil; t++ {
				r.valType()
			}
		case op == 0xd0: // ref.null
			r.refType()
		case op >= 0x28 && op <= 0x3e: // loads and stores
			r.memarg()
		case op == 0x41:
			r.s64()
		case op == 0x42:
			r.s64()
		case op == 0x43:
			r.bytes(4)
		case op == 0x44:
			r.bytes(8)
		case op >= 0x45 && op <= 0xc4: // numeric, no immediates
		case op == 0xfc:
			r.prefixFC()
		case op == 0xfd:
			r.prefixFD()
		default:
			return nil, fmt.Errorf("%w: opcode %#x", ErrUnsupported, op)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.i != len(r.b) {
		return nil, fmt.Errorf("%w: bytes after the function's end", ErrUnsupported)
	}
	return append(dst, r.b[last:]...), nil
}

// ImportsModule reports whether wasm imports anything from module name,
// reading only the import section (wazero validates the rest later).
func ImportsModule(wasm []byte, name string) (bool, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return false, fmt.Errorf("%w: not a Wasm binary", ErrUnsupported)
	}
	r := reader{b: wasm, i: 8}
	for r.i < len(r.b) && r.err == nil {
		id := r.byte()
		body := r.bytes(int(r.u32()))
		if id != secImport || r.err != nil {
			continue
		}
		ir := reader{b: body}
		n := ir.u32()
		for i := uint32(0); i < n && ir.err == nil; i++ {
			mod := ir.bytes(int(ir.u32()))
			ir.bytes(int(ir.u32()))
			if string(mod) == name {
				return true, nil
			}
			switch kind := ir.byte(); kind {
			case 0x00:
				ir.u32()
			case 0x01:
				ir.refType()
				ir.limits()
			case 0x02:
				ir.limits()
			case 0x03:
				ir.valType()
				ir.byte()
			case 0x04:
				ir.byte()
				ir.u32()
			default:
				return false, fmt.Errorf("%w: import kind %#x", ErrUnsupported, kind)
			}
		}
		return false, ir.err
	}
	return false, r.err
}
