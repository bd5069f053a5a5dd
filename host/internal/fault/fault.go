// Package fault names the ways a guest can fail and carries them from the
// runtimes to the host's public GuestError. It never holds text produced by
// a guest.
package fault

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero/sys"
)

// Reason codes of guest failures (abi/README.md §6).
const (
	Trap           = "gate.trap"
	Timeout        = "gate.timeout"
	Canceled       = "gate.canceled"
	MemoryLimit    = "gate.memory_limit"
	MissingExport  = "gate.missing_export"
	ABIVersion     = "gate.abi_version"
	BadImport      = "gate.bad_import"
	Alloc          = "gate.alloc"
	ConfigRejected = "gate.config_rejected"
	BadOutput      = "gate.bad_output"
	OutputTooLarge = "gate.output_too_large"
	BadDecision    = "gate.bad_decision"
	StackLimit     = "gate.stack_limit"
	ReservedName   = "gate.reserved_name"
	InvalidModule  = "gate.invalid_module"
	LoadTimeout    = "gate.load_timeout"
	// LoadMemory: compiling the module would need more memory than one
	// load may use (host.WithLoadMemoryBudget).
	LoadMemory = "gate.load_memory"
	// Structural limits checked before compiling (host/internal/interrupt).
	TooManyFunctions    = "gate.too_many_functions"
	TooManyLocals       = "gate.too_many_locals"
	NestingTooDeep      = "gate.nesting_too_deep"
	BranchTableTooLarge = "gate.branch_table_too_large"
	FunctionTooLarge    = "gate.function_too_large"
)

// Error is a guest failure: a stable code, the step that failed and a
// host-side description. Cause is context.DeadlineExceeded or
// context.Canceled for timeouts and cancellations, nil otherwise: wazero's
// trap messages carry guest-chosen names and are deliberately dropped.
type Error struct {
	Code   string
	Op     string // "instantiate", "configure", "evaluate", "load", ...
	Reason string // host-written, never guest text
	Cause  error
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%s during %s: %s", e.Code, e.Op, e.Reason)
	}
	return fmt.Sprintf("%s during %s", e.Code, e.Op)
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns an Error with a host-written reason.
func New(code, op, reason string) *Error {
	return &Error{Code: code, Op: op, Reason: reason}
}

// FromCode maps a code to its sanitised cause.
func FromCode(code, op string) *Error {
	e := &Error{Code: code, Op: op}
	switch code {
	case Timeout:
		e.Cause = context.DeadlineExceeded
	case Canceled:
		e.Cause = context.Canceled
	}
	return e
}

// As reports whether err is (or wraps) an *Error.
func As(err error) (*Error, bool) {
	var fe *Error
	ok := errors.As(err, &fe)
	return fe, ok
}

// Classify maps a failed guest call to a reason code, the one rule both
// runtimes share: the memory cap (memoryHit), then wazero's exit codes for
// a deadline or cancellation, then the caller's context; anything else is
// a trap described by trapDetail. Nothing of err's text is kept: it may
// carry the guest's own messages or function names.
func Classify(ctx context.Context, op string, err error, memoryHit bool, trapDetail string) *Error {
	if memoryHit {
		return FromCode(MemoryLimit, op)
	}
	var ee *sys.ExitError
	if errors.As(err, &ee) {
		switch ee.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return FromCode(Timeout, op)
		case sys.ExitCodeContextCanceled:
			return FromCode(Canceled, op)
		}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return FromCode(Timeout, op)
	case ctx.Err() != nil:
		return FromCode(Canceled, op)
	}
	return New(Trap, op, trapDetail)
}
