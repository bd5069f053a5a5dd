package interrupt

import "fmt"

// globals are the indices of the globals the pass adds.
type globals struct{ flag, budget, depth, tables uint32 }

// rewriter rewrites the code section.
type rewriter struct {
	m        *module
	lim      Limits
	g        globals
	poll     uint32 // function index of the added poll function
	capBytes uint64
	body     []byte // scratch: one rewritten function body
	// mutatesState: some function changes a table or drops a data segment
	// (state a memory-and-globals snapshot does not restore).
	mutatesState bool
	// indexesData: some function names a data segment by index
	// (memory.init, data.drop), so segments must keep their numbering.
	indexesData bool
}

// Opcodes the pass emits or rewrites.
const (
	opUnreachable = 0x00
	opBlock       = 0x02
	opLoop        = 0x03
	opIf          = 0x04
	opElse        = 0x05
	opEnd         = 0x0b
	opBr          = 0x0c
	opReturn      = 0x0f
	opCall        = 0x10
	opDrop        = 0x1a
	opLocalGet    = 0x20
	opLocalSet    = 0x21
	opGlobalGet   = 0x23
	opGlobalSet   = 0x24
	opMemorySize  = 0x3f
	opMemoryGrow  = 0x40
	opI32Const    = 0x41
	opI64Const    = 0x42
	opI32Eqz      = 0x45
	opI32GtU      = 0x4b
	opI64GtU      = 0x56
	opI32Add      = 0x6a
	opI32Sub      = 0x6b
	opI64Add      = 0x7c
	opI64Shl      = 0x86
	opI64ExtendU  = 0xad
	opPrefixFC    = 0xfc
	fcTableGrow   = 15
	fcTableSize   = 16
	blockEmpty    = 0x40
	typeI32       = 0x7f
)

// codeSection rewrites every function body and appends the poll function.
func (rw *rewriter) codeSection(body []byte) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	if r.err != nil {
		return nil, r.err
	}
	if int(n) != len(rw.m.funcTypes) {
		return nil, fmt.Errorf("%w: code and function sections disagree", ErrUnsupported)
	}
	out := appendU32(make([]byte, 0, len(body)+len(body)/4+64), n+1)
	for i := uint32(0); i < n; i++ {
		size := r.u32()
		if size > rw.lim.BodyBytes {
			return nil, &LimitError{What: LimitBodyBytes, Value: uint64(size), Limit: rw.lim.BodyBytes}
		}
		code := r.bytes(int(size))
		if r.err != nil {
			return nil, r.err
		}
		fn, err := rw.function(code, rw.m.types[rw.m.funcTypes[i]])
		if err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = appendU32(out, uint32(len(fn)))
		out = append(out, fn...)
	}
	if r.i != len(r.b) {
		return nil, fmt.Errorf("%w: trailing bytes in code section", ErrUnsupported)
	}
	poll := rw.pollBody()
	out = appendU32(out, uint32(len(poll)))
	return append(out, poll...), nil
}

// pollBody is the added function that every Budget counts:
//
//	budget = Budget
//	if flag != 0 { unreachable }
//	drop(memory.grow(0))   // visits Go: a preemption point
//	loop {}                // where WithCloseOnContextDone checks the module
//
// NB: without a visit to Go now and then, a guest spinning in native code
// could never be preempted, and a garbage collection elsewhere in the
// process would wait for it (stop the world) forever, timers included.
func (rw *rewriter) pollBody() []byte {
	c := []byte{0x00} // no locals
	c = appendS32(append(c, opI32Const), Budget)
	c = appendU32(append(c, opGlobalSet), rw.g.budget)
	c = appendU32(append(c, opGlobalGet), rw.g.flag)
	c = append(c, opIf, blockEmpty, opUnreachable, opEnd)
	if rw.m.hasMemory {
		c = append(c, opI32Const, 0x00, opMemoryGrow, 0x00, opDrop)
	}
	c = append(c, opLoop, blockEmpty, opEnd)
	return append(c, opEnd)
}

// countCheck counts one function entry or loop iteration:
//
//	if budget == 0 { poll() }
//	budget--
func (rw *rewriter) countCheck(dst []byte) []byte {
	dst = appendU32(append(dst, opGlobalGet), rw.g.budget)
	dst = append(dst, opI32Eqz, opIf, blockEmpty, opCall)
	dst = appendU32(dst, rw.poll)
	dst = append(dst, opEnd)
	dst = appendU32(append(dst, opGlobalGet), rw.g.budget)
	dst = append(dst, opI32Const, 0x01, opI32Sub, opGlobalSet)
	return appendU32(dst, rw.g.budget)
}

// prologue counts the call depth and the budget at function entry:
//
//	depth++
//	if depth > CallDepth { flag = FlagCallDepth; unreachable }
func (rw *rewriter) prologue(dst []byte) []byte {
	dst = appendU32(append(dst, opGlobalGet), rw.g.depth)
	dst = append(dst, opI32Const, 0x01, opI32Add, opGlobalSet)
	dst = appendU32(dst, rw.g.depth)
	dst = appendU32(append(dst, opGlobalGet), rw.g.depth)
	dst = appendS32(append(dst, opI32Const), int32(rw.lim.CallDepth))
	dst = append(dst, opI32GtU, opIf, blockEmpty, opI32Const, FlagCallDepth, opGlobalSet)
	dst = appendU32(dst, rw.g.flag)
	dst = append(dst, opUnreachable, opEnd)
	return rw.countCheck(dst)
}

// epilogue: depth--.
func (rw *rewriter) epilogue(dst []byte) []byte {
	dst = appendU32(append(dst, opGlobalGet), rw.g.depth)
	dst = append(dst, opI32Const, 0x01, opI32Sub, opGlobalSet)
	return appendU32(dst, rw.g.depth)
}

// tableGrow replaces table.grow x (stack: ref, n) by a growth refused when
// linear memory plus 8 bytes per table entry would pass the cap:
//
//	n, ref := pop(), pop()
//	if (tables+n)*8 + memory.size<<16 > cap { flag = FlagTableLimit; push(-1) }
//	else { push(table.grow x (ref, n)); tables = Σ table.size }
func (rw *rewriter) tableGrow(dst []byte, x, scratch uint32) []byte {
	n := scratch
	ref := scratch + 1 // funcref
	if rw.m.tableTypes[x] == 0x6f {
		ref = scratch + 2 // externref
	}
	dst = appendU32(append(dst, opLocalSet), n)
	dst = appendU32(append(dst, opLocalSet), ref)
	dst = appendU32(append(dst, opGlobalGet), rw.g.tables)
	dst = append(dst, opI64ExtendU, opLocalGet)
	dst = appendU32(dst, n)
	dst = append(dst, opI64ExtendU, opI64Add, opI64Const, 0x03, opI64Shl)
	if rw.m.hasMemory {
		dst = append(dst, opMemorySize, 0x00, opI64ExtendU, opI64Const, 0x10, opI64Shl, opI64Add)
	}
	dst = appendS64(append(dst, opI64Const), int64(rw.capBytes))
	dst = append(dst, opI64GtU, opIf, typeI32, opI32Const, FlagTableLimit, opGlobalSet)
	dst = appendU32(dst, rw.g.flag)
	dst = append(dst, opI32Const, 0x7f, opElse, opLocalGet) // i32.const -1
	dst = appendU32(dst, ref)
	dst = appendU32(append(dst, opLocalGet), n)
	dst = append(dst, opPrefixFC, fcTableGrow)
	dst = appendU32(dst, x)
	for t := range rw.m.tableTypes {
		dst = append(dst, opPrefixFC, fcTableSize)
		dst = appendU32(dst, uint32(t))
		if t > 0 {
			dst = append(dst, opI32Add)
		}
	}
	dst = appendU32(append(dst, opGlobalSet), rw.g.tables)
	return append(dst, opEnd)
}

// function rewrites one function body:
//
//	locals + scratch locals (when it grows a table)
//	prologue
//	block (result types)  ; every `return` becomes a br to this block
//	  body, with countCheck after every loop header and table.grow replaced
//	end
//	epilogue
//	end
func (rw *rewriter) function(code []byte, ft funcType) ([]byte, error) {
	r := reader{b: code}
	groups := r.u32()
	locals := uint64(len(ft.params))
	for g := uint32(0); g < groups && r.err == nil; g++ {
		locals += uint64(r.u32())
		r.valType()
		if locals > uint64(rw.lim.Locals) {
			return nil, &LimitError{What: LimitLocals, Value: locals, Limit: rw.lim.Locals}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	localDecls := code[lenU32(code):r.i]
	scratch := uint32(locals)
	growsTable := false

	body := rw.body[:0]
	last := r.i // copied up to here
	depth := uint32(1)
	for depth > 0 {
		if r.err != nil {
			return nil, r.err
		}
		if r.i >= len(r.b) {
			return nil, fmt.Errorf("%w: function body ends early", ErrUnsupported)
		}
		at := r.i
		op := r.byte()
		switch {
		case op == opBlock || op == opIf:
			r.blockType()
			depth++
			if depth > rw.lim.Nesting {
				return nil, &LimitError{What: LimitNesting, Value: uint64(depth), Limit: rw.lim.Nesting}
			}
		case op == opLoop:
			r.blockType()
			depth++
			if depth > rw.lim.Nesting {
				return nil, &LimitError{What: LimitNesting, Value: uint64(depth), Limit: rw.lim.Nesting}
			}
			body = append(body, r.b[last:r.i]...)
			body = rw.countCheck(body)
			last = r.i
		case op == opEnd:
			depth--
		case op == opReturn:
			body = append(body, r.b[last:at]...)
			body = appendU32(append(body, opBr), depth-1) // the wrapper block
			last = r.i
		case op == opElse || op == opUnreachable || op == 0x01 || op == opDrop || op == 0x1b || op == 0xd1:
			// else, unreachable, nop, drop, select, ref.is_null
		case op == opCall || op == 0xd2: // call, ref.func
			if f := r.u32(); f >= rw.poll {
				return nil, fmt.Errorf("%w: function index out of range", ErrUnsupported)
			}
		case op == opBr || op == 0x0d || (op >= opLocalGet && op <= 0x22) || op == 0x25 || op == 0x26 ||
			op == opMemorySize || op == opMemoryGrow:
			// br, br_if, local.*, table.get/set, memory.size/grow: one u32
			r.u32()
			rw.mutatesState = rw.mutatesState || op == 0x26
		case op == opGlobalGet || op == opGlobalSet:
			if g := r.u32(); g >= rw.g.flag {
				return nil, fmt.Errorf("%w: global index out of range", ErrUnsupported)
			}
		case op == 0x0e: // br_table
			n := r.u32()
			if n > rw.lim.BranchTable {
				return nil, &LimitError{What: LimitBranchTable, Value: uint64(n), Limit: rw.lim.BranchTable}
			}
			for t := uint32(0); t <= n && r.err == nil; t++ {
				r.u32()
			}
		case op == 0x11: // call_indirect
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
		case op == opI32Const || op == opI64Const:
			r.s64()
		case op == 0x43:
			r.bytes(4)
		case op == 0x44:
			r.bytes(8)
		case op >= opI32Eqz && op <= 0xc4: // numeric, no immediates
		case op == opPrefixFC:
			sub := r.u32()
			switch sub {
			case 9, 12, 13, 14, 17: // data.drop, table.init, elem.drop, table.copy, table.fill
				rw.mutatesState = true
			}
			rw.indexesData = rw.indexesData || sub == 8 || sub == 9 // memory.init, data.drop
			if sub != fcTableGrow {
				r.prefixFC(sub)
				break
			}
			rw.mutatesState = true
			x := r.u32()
			if r.err != nil || int(x) >= len(rw.m.tableTypes) {
				return nil, fmt.Errorf("%w: table index out of range", ErrUnsupported)
			}
			body = append(body, r.b[last:at]...)
			body = rw.tableGrow(body, x, scratch)
			last = r.i
			growsTable = true
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
	body = append(body, r.b[last:]...) // up to the end, which now closes the wrapper block
	rw.body = body

	out := make([]byte, 0, len(code)+len(body)-len(code)+96)
	if growsTable {
		out = appendU32(out, groups+3)
		out = append(out, localDecls...)
		out = append(out, 0x01, typeI32, 0x01, 0x70, 0x01, 0x6f) // n i32, funcref, externref
	} else {
		out = appendU32(out, groups)
		out = append(out, localDecls...)
	}
	out = rw.prologue(out)
	out = append(out, opBlock)
	switch len(ft.results) {
	case 0:
		out = append(out, blockEmpty)
	case 1:
		out = append(out, ft.results[0])
	default:
		out = appendS64(out, int64(rw.m.typeIndex(nil, ft.results)))
	}
	out = append(out, body...)
	out = rw.epilogue(out)
	return append(out, opEnd), nil
}
