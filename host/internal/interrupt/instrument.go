// Package interrupt makes a Wasm module stoppable and bounded: it rewrites
// the module so that
//
//   - every function entry and every loop header counts down a budget and,
//     every Budget counts, calls an added poll function that reads a new
//     mutable i32 global (exported as GlobalName, set by the host from
//     another goroutine when a call's deadline passes or its context ends)
//     and traps when it is non-zero, then visits Go (so the Go runtime can
//     preempt the goroutine) and passes an empty loop header (where wazero's
//     WithCloseOnContextDone, used for Extism modules, checks the module);
//   - every function entry counts the call depth and traps past
//     Limits.CallDepth (flag value FlagCallDepth), every exit counts it down;
//   - table.grow is refused (result -1, flag FlagTableLimit) when linear
//     memory plus 8 bytes per table entry would pass the memory cap, and the
//     tables' total size is kept in a global exported as TablesGlobalName,
//     which the host's memory allocator counts against the same cap;
//   - the start function no longer runs inside instantiation (where no
//     deadline can reach it): it is exported as StartExport for the host to
//     call under the deadline;
//   - neighbouring data segments are merged (coalesceData), when no
//     instruction names one by index: the same memory at instantiation,
//     from a few dozen segments instead of the Go toolchain's tens of
//     thousands, which wazero decodes, keeps and applies one by one.
//
// Why count function entries, not only loop headers? A function that calls
// itself twice per frame (depth 60, 2^60 calls) never reaches a loop header
// and never overflows the stack: without a check at function entry it runs
// forever, and wazero's WithCloseOnContextDone has the same blind spot.
//
// Why not wazero's WithCloseOnContextDone for every module? It makes every
// loop iteration leave native code to check the module's state and starts a
// goroutine per call: a Go-built guest ran about 10× slower a call under it.
// A counter per function entry and loop iteration and a poll every Budget
// counts cost little.
//
// The rewrite is one pass, linear in the module's size, and checks the
// structural Limits on the way. It handles core Wasm 2.0 as wazero runs it
// by default (bulk memory, reference types, SIMD, multi-value, sign
// extension, non-trapping conversions); anything else (tail calls,
// exception handling, threads, memory64) is refused with ErrUnsupported, as
// wazero would refuse it.
package interrupt

import (
	"errors"
	"fmt"
	"strings"
)

// Names the host reserves. A module exporting any name with ReservedPrefix
// is refused (ErrReservedName).
const (
	ReservedPrefix   = "__govhost_"
	GlobalName       = ReservedPrefix + "interrupt" // the interrupt flag (mut i32)
	TablesGlobalName = ReservedPrefix + "tables"    // total table entries (mut i32)
	StartExport      = ReservedPrefix + "start"     // the module's start function, if any
)

// Values of the flag. The host sets FlagInterrupted; the instrumented code
// sets the others just before trapping (or, for a refused table growth,
// so that the next poll traps).
const (
	FlagClear       = 0
	FlagInterrupted = 1
	FlagTableLimit  = 2
	FlagCallDepth   = 3
)

// Budget is how many function entries and loop iterations run between two
// polls.
const Budget = 1024

// ErrUnsupported is returned for modules Instrument does not rewrite.
var ErrUnsupported = errors.New("interrupt: module not instrumentable")

// Options configure Instrument.
type Options struct {
	Limits Limits
	// MemoryCapBytes is the cap on linear memory plus 8 bytes per table
	// entry; table.grow past it is refused.
	MemoryCapBytes uint64
}

// Result is an instrumented module and what the pass learned.
type Result struct {
	Wasm []byte
	// MemoryMinPages is the declared minimum of the module's memory (0 when
	// it has none).
	MemoryMinPages uint64
	// TableEntries is the sum of the declared minimum sizes of its tables.
	TableEntries uint64
	// DataBytes and CodeBytes are the sizes of the input's data and code
	// sections: what the host's load memory budget is estimated from.
	DataBytes, CodeBytes uint64
	// HasStart reports a start section, now exported as StartExport.
	HasStart bool
	// MutableGlobals are the indices of the module's own mutable globals,
	// each exported as GlobalExport(index) so that the host can snapshot
	// and restore them.
	MutableGlobals []uint32
	// Resettable reports that restoring linear memory and MutableGlobals
	// returns an instance to a snapshot's state: the module never changes
	// its tables (table.set/grow/fill/copy/init, elem.drop) nor drops a data
	// segment, and has no mutable v128 or reference globals (which the host
	// cannot restore).
	Resettable bool
}

// GlobalExport is the name under which Instrument exports the module's
// mutable global idx.
func GlobalExport(idx uint32) string { return fmt.Sprintf("%sg%d", ReservedPrefix, idx) }

const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank orders sections as the binary format requires.
var sectionRank = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

type section struct {
	id   byte
	body []byte
}

// funcType is a function type's parameter count and result types.
type funcType struct {
	params  []byte
	results []byte
}

// module is what the pass needs to know about the input.
type module struct {
	types       []funcType
	importFuncs uint32
	funcTypes   []uint32 // type index of each defined function
	tableTypes  []byte   // reference type of each table
	hasMemory   bool
	nGlobals    uint32
	start       int64 // -1: none
	// unrestorable: the module has state the host cannot snapshot.
	unrestorable bool
	res          Result
}

// Instrument returns the rewritten module. The input need not be valid: what
// the pass cannot parse is ErrUnsupported, and wazero validates the output.
// Errors: ErrUnsupported, ErrReservedName, ErrBadImport, *LimitError.
func Instrument(wasm []byte, opts Options) (*Result, error) {
	lim := opts.Limits.resolved()
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || wasm[4] != 1 || wasm[5] != 0 || wasm[6] != 0 || wasm[7] != 0 {
		return nil, fmt.Errorf("%w: not a core Wasm 1 binary", ErrUnsupported)
	}
	var sections []section
	r := reader{b: wasm, i: 8}
	lastRank := 0
	for r.i < len(r.b) {
		id := r.byte()
		body := r.bytes(int(r.u32()))
		if r.err != nil {
			return nil, r.err
		}
		if id != secCustom {
			rank, ok := sectionRank[id]
			if !ok || rank <= lastRank {
				return nil, fmt.Errorf("%w: section %d out of order or unknown", ErrUnsupported, id)
			}
			lastRank = rank
		}
		if id == secTag {
			return nil, fmt.Errorf("%w: exception handling", ErrUnsupported)
		}
		sections = append(sections, section{id, body})
	}

	m := &module{start: -1}
	for _, s := range sections {
		if err := m.read(s, lim); err != nil {
			return nil, err
		}
	}
	if n := uint64(m.importFuncs) + uint64(len(m.funcTypes)); n > uint64(lim.Functions) {
		return nil, &LimitError{What: LimitFunctions, Value: n, Limit: lim.Functions}
	}

	// The new function types, globals and the poll function.
	pollType := m.typeIndex(nil, nil)
	nFuncs := m.importFuncs + uint32(len(m.funcTypes))
	g := globals{flag: m.nGlobals, budget: m.nGlobals + 1, depth: m.nGlobals + 2, tables: m.nGlobals + 3}
	rw := rewriter{m: m, lim: lim, g: g, poll: nFuncs, capBytes: opts.MemoryCapBytes}

	// Ensure the sections this pass writes to exist, in order.
	for _, id := range []byte{secType, secFunction, secGlobal, secExport, secCode} {
		found := false
		for _, s := range sections {
			found = found || s.id == id
		}
		if !found {
			sections = insertSection(sections, section{id, []byte{0}})
		}
	}

	out := append(make([]byte, 0, len(wasm)+len(wasm)/8+256), wasm[:8]...)
	emit := func(id byte, body []byte) {
		out = append(out, id)
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	// The code first: it may add block types to the type section.
	var code []byte
	for _, s := range sections {
		if s.id == secCode {
			var err error
			if code, err = rw.codeSection(s.body); err != nil {
				return nil, err
			}
		}
	}
	dataCount := false
	for _, s := range sections {
		dataCount = dataCount || s.id == secDataCount
	}
	for _, s := range sections {
		switch s.id {
		case secData:
			m.res.DataBytes = uint64(len(s.body))
			runs, ok := planData(s.body)
			if dataCount || rw.indexesData || !ok {
				emit(secData, s.body)
				break
			}
			// NB: straight into out: the data is copied once (planData).
			out = append(out, secData)
			out = appendU32(out, uint32(dataSize(runs)))
			out = appendData(out, runs)
		case secType:
			emit(secType, m.typeSection(s.body))
		case secFunction:
			emit(secFunction, appendVec(s.body, 1, appendU32(nil, pollType)))
		case secGlobal:
			var extra []byte
			for i := 0; i < 3; i++ { // flag, budget, depth: mut i32 = 0
				extra = append(extra, 0x7f, 0x01, 0x41, 0x00, 0x0b)
			}
			extra = append(extra, 0x7f, 0x01, 0x41) // tables: mut i32 = declared minimum
			extra = appendS32(extra, int32(m.res.TableEntries))
			extra = append(extra, 0x0b)
			emit(secGlobal, appendVec(s.body, 4, extra))
		case secExport:
			body, err := m.exportSection(s.body, g, nFuncs)
			if err != nil {
				return nil, err
			}
			emit(secExport, body)
		case secStart:
			// Dropped: exported as StartExport instead.
		case secCode:
			m.res.CodeBytes = uint64(len(s.body))
			emit(secCode, code)
		default:
			emit(s.id, s.body)
		}
	}
	m.res.Wasm = out
	m.res.Resettable = !m.unrestorable && !rw.mutatesState
	return &m.res, nil
}

// insertSection inserts s before the first section of a higher rank.
func insertSection(sections []section, s section) []section {
	at := len(sections)
	for i, t := range sections {
		if t.id != secCustom && sectionRank[t.id] > sectionRank[s.id] {
			at = i
			break
		}
	}
	return append(sections[:at], append([]section{s}, sections[at:]...)...)
}

// appendVec returns body (a vector) with added more elements, encoded in
// extra.
func appendVec(body []byte, added uint32, extra []byte) []byte {
	r := reader{b: body}
	n := r.u32()
	out := appendU32(make([]byte, 0, len(body)+len(extra)+8), n+added)
	out = append(out, body[r.i:]...)
	return append(out, extra...)
}

// read records what the pass needs from one input section.
func (m *module) read(s section, lim Limits) error {
	r := reader{b: s.body}
	switch s.id {
	case secType:
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			if form := r.byte(); form != 0x60 {
				return fmt.Errorf("%w: type form %#x", ErrUnsupported, form)
			}
			var ft funcType
			ft.params = r.valTypes()
			ft.results = r.valTypes()
			m.types = append(m.types, ft)
		}
	case secImport:
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			r.bytes(int(r.u32())) // module
			r.bytes(int(r.u32())) // name
			switch kind := r.byte(); kind {
			case 0x00:
				r.u32()
				m.importFuncs++
			case 0x01, 0x02, 0x03, 0x04:
				return ErrBadImport
			default:
				return fmt.Errorf("%w: import kind %#x", ErrUnsupported, kind)
			}
		}
	case secFunction:
		n := r.u32()
		if n > lim.Functions {
			return &LimitError{What: LimitFunctions, Value: uint64(n), Limit: lim.Functions}
		}
		for i := uint32(0); i < n && r.err == nil; i++ {
			t := r.u32()
			if int(t) >= len(m.types) {
				return fmt.Errorf("%w: function type index out of range", ErrUnsupported)
			}
			m.funcTypes = append(m.funcTypes, t)
		}
	case secTable:
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			rt := r.byte()
			if rt != 0x70 && rt != 0x6f {
				return fmt.Errorf("%w: table element type %#x", ErrUnsupported, rt)
			}
			flags := r.byte()
			if flags > 1 {
				return fmt.Errorf("%w: table limits %#x", ErrUnsupported, flags)
			}
			m.res.TableEntries += uint64(r.u32())
			if flags == 1 {
				r.u32()
			}
			m.tableTypes = append(m.tableTypes, rt)
		}
	case secMemory:
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			flags := r.byte()
			if flags > 1 {
				return fmt.Errorf("%w: memory limits %#x (shared or 64-bit)", ErrUnsupported, flags)
			}
			m.res.MemoryMinPages = max(m.res.MemoryMinPages, uint64(r.u32()))
			if flags == 1 {
				r.u32()
			}
			m.hasMemory = true
		}
	case secGlobal:
		m.nGlobals = r.u32()
		for i := uint32(0); i < m.nGlobals && r.err == nil; i++ {
			vt := r.byte()
			mut := r.byte()
			if err := r.constExpr(); err != nil {
				return err
			}
			if mut == 1 {
				switch vt {
				case 0x7f, 0x7e, 0x7d, 0x7c:
					m.res.MutableGlobals = append(m.res.MutableGlobals, i)
				default:
					m.unrestorable = true
				}
			}
		}
	case secStart:
		m.start = int64(r.u32())
		m.res.HasStart = true
	default:
		return nil
	}
	if r.err != nil {
		return r.err
	}
	if r.i != len(r.b) {
		return fmt.Errorf("%w: trailing bytes in section %d", ErrUnsupported, s.id)
	}
	if m.res.TableEntries > 1<<31 {
		return fmt.Errorf("%w: tables larger than 2^31 entries", ErrUnsupported)
	}
	return nil
}

// typeIndex returns the index of the function type params -> results,
// adding it to m.types when missing.
func (m *module) typeIndex(params, results []byte) uint32 {
	for i, t := range m.types {
		if string(t.params) == string(params) && string(t.results) == string(results) {
			return uint32(i)
		}
	}
	m.types = append(m.types, funcType{params: params, results: results})
	return uint32(len(m.types) - 1)
}

// typeSection returns the type section with the types added by typeIndex
// (after the code section was rewritten).
func (m *module) typeSection(body []byte) []byte {
	r := reader{b: body}
	n := r.u32()
	out := appendU32(nil, uint32(len(m.types)))
	out = append(out, body[r.i:]...)
	for _, t := range m.types[n:] {
		out = append(out, 0x60)
		out = appendU32(out, uint32(len(t.params)))
		out = append(out, t.params...)
		out = appendU32(out, uint32(len(t.results)))
		out = append(out, t.results...)
	}
	return out
}

// exportSection refuses reserved names and indices the input does not
// define (which would name the host's additions), then adds the host's
// exports.
func (m *module) exportSection(body []byte, g globals, nFuncs uint32) ([]byte, error) {
	r := reader{b: body}
	n := r.u32()
	for i := uint32(0); i < n && r.err == nil; i++ {
		name := r.bytes(int(r.u32()))
		kind := r.byte()
		idx := r.u32()
		if strings.HasPrefix(string(name), ReservedPrefix) {
			return nil, ErrReservedName
		}
		if (kind == 0x00 && idx >= nFuncs) || (kind == 0x03 && idx >= m.nGlobals) {
			return nil, fmt.Errorf("%w: export index out of range", ErrUnsupported)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	added := uint32(2 + len(m.res.MutableGlobals))
	out := append([]byte(nil), body[lenU32(body):]...)
	out = appendExport(out, GlobalName, 0x03, g.flag)
	out = appendExport(out, TablesGlobalName, 0x03, g.tables)
	for _, idx := range m.res.MutableGlobals {
		out = appendExport(out, GlobalExport(idx), 0x03, idx)
	}
	if m.start >= 0 {
		if uint64(m.start) >= uint64(nFuncs) {
			return nil, fmt.Errorf("%w: start function out of range", ErrUnsupported)
		}
		out = appendExport(out, StartExport, 0x00, uint32(m.start))
		added++
	}
	return append(appendU32(nil, n+added), out...), nil
}

func appendExport(dst []byte, name string, kind byte, idx uint32) []byte {
	dst = appendU32(dst, uint32(len(name)))
	dst = append(dst, name...)
	dst = append(dst, kind)
	return appendU32(dst, idx)
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
