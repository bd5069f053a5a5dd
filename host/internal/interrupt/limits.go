package interrupt

import (
	"errors"
	"fmt"
)

// Limits are the structural bounds Instrument checks, in the same single
// pass that rewrites the module, before wazero compiles anything. wazero's
// compiler is superlinear in some of these dimensions (a 70 KB module of
// 10 000 loops took seconds, 100 000 nested blocks or a br_table of a
// million targets never finished), and compilation cannot be cancelled, so
// such modules are refused before it starts. Zero fields take the
// DefaultLimits value.
type Limits struct {
	Functions   uint32 // defined and imported functions
	Locals      uint32 // parameters and locals of one function
	Nesting     uint32 // block, loop and if nesting depth within one function
	BranchTable uint32 // targets of one br_table
	BodyBytes   uint32 // bytes of one function body
	CallDepth   uint32 // frames of guest functions on the call stack at run time
}

// DefaultLimits hold every honest module measured here with a wide margin:
// the largest Go-built gate (plugins/builtin/permission.wasm) has about 3 400
// functions, 270 locals in one function, nesting 200, a br_table of 900
// targets and a 62 KB body; Go-built guests call about 60 frames deep.
var DefaultLimits = Limits{
	Functions:   100_000,
	Locals:      50_000,
	Nesting:     5_000,
	BranchTable: 50_000,
	BodyBytes:   4 << 20,
	CallDepth:   10_000,
}

func (l Limits) resolved() Limits {
	def := DefaultLimits
	pick := func(v, d uint32) uint32 {
		if v == 0 {
			return d
		}
		return v
	}
	return Limits{
		Functions:   pick(l.Functions, def.Functions),
		Locals:      pick(l.Locals, def.Locals),
		Nesting:     pick(l.Nesting, def.Nesting),
		BranchTable: pick(l.BranchTable, def.BranchTable),
		BodyBytes:   pick(l.BodyBytes, def.BodyBytes),
		CallDepth:   pick(l.CallDepth, def.CallDepth),
	}
}

// What a LimitError reports: each is also the suffix of the host's stable
// reason code (gate.too_many_functions, ...).
const (
	LimitFunctions   = "too_many_functions"
	LimitLocals      = "too_many_locals"
	LimitNesting     = "nesting_too_deep"
	LimitBranchTable = "branch_table_too_large"
	LimitBodyBytes   = "function_too_large"
)

// LimitError refuses a module that exceeds one of the Limits.
type LimitError struct {
	What  string // one of the Limit constants
	Value uint64 // what the module has (at least)
	Limit uint32
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("interrupt: module exceeds a structural limit (%s: %d > %d)", e.What, e.Value, e.Limit)
}

// ErrReservedName refuses a module that exports a name the host reserves
// (ReservedPrefix): exporting the host's interrupt flag would let a module
// switch off its own deadline.
var ErrReservedName = errors.New("interrupt: module exports a name reserved by the host")

// ErrBadImport refuses imported globals, tables, memories and tags: the
// host provides none.
var ErrBadImport = errors.New("interrupt: module imports a global, table, memory or tag")
