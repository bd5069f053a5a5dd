package host

import (
	"errors"
	"fmt"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/fault"
)

// Reason codes of guest failures, as they appear in the deny GateOutput and
// in GuestError.Code (abi/README.md §6).
const (
	CodeTrap           = fault.Trap
	CodeTimeout        = fault.Timeout
	CodeCanceled       = fault.Canceled
	CodeMemoryLimit    = fault.MemoryLimit
	CodeMissingExport  = fault.MissingExport
	CodeABIVersion     = fault.ABIVersion
	CodeBadImport      = fault.BadImport
	CodeAlloc          = fault.Alloc
	CodeConfigRejected = fault.ConfigRejected
	CodeBadOutput      = fault.BadOutput
	CodeOutputTooLarge = fault.OutputTooLarge
	CodeBadDecision    = fault.BadDecision
	// CodeStackLimit: the guest's call depth passed WithMaxCallDepth.
	CodeStackLimit = fault.StackLimit
	// CodeReservedName: the module exports a name the host reserves
	// (__govhost_...), such as its interrupt flag.
	CodeReservedName = fault.ReservedName
	// CodeLoadTimeout: Load took longer than WithLoadTimeout (or the
	// caller's deadline).
	CodeLoadTimeout = fault.LoadTimeout
	// CodeLoadMemory: compiling the module would need more memory than
	// WithLoadMemoryBudget allows one load.
	CodeLoadMemory = fault.LoadMemory
	// Structural limits (WithModuleLimits), checked before compiling.
	CodeTooManyFunctions    = fault.TooManyFunctions
	CodeTooManyLocals       = fault.TooManyLocals
	CodeNestingTooDeep      = fault.NestingTooDeep
	CodeBranchTableTooLarge = fault.BranchTableTooLarge
	CodeFunctionTooLarge    = fault.FunctionTooLarge
	// CodeInvalidModule: the bytes are not a valid Wasm module, or use a
	// feature the host does not run (threads, tail calls, exceptions,
	// memory64).
	CodeInvalidModule = fault.InvalidModule
	// CodeHostError is the reason of the deny returned with an ordinary
	// (host-side) error, such as ErrClosed.
	CodeHostError = "gate.host_error"
)

// Sentinel errors of the host.
var (
	ErrClosed         = errors.New("host: closed")
	ErrInvalidConfig  = errors.New("host: invalid config")
	ErrDigestRequired = errors.New("host: an expected sha256 digest is required (pass host.AnyDigest to trust the bytes)")
	ErrBadGateConfig  = errors.New("host: gate configuration is not valid JSON")
	ErrForeignModule  = errors.New("host: module was loaded by another host")
	// ErrLoadBusy refuses a load when every compilation slot is taken and
	// the queue behind them is full (WithCompileLimits): retry later.
	ErrLoadBusy = errors.New("host: too many module loads in progress; retry later")
)

// GuestError reports that a guest failed. Code is the stable reason code
// also carried by the deny GateOutput. The error's text is written by the
// host and never contains text produced by the guest.
type GuestError struct {
	// Code is the reason code, one of the Code constants.
	Code string
	// Op is the step that failed: load, instantiate, configure, alloc,
	// evaluate or describe.
	Op string
	// Digest is the module's sha256 digest (hex).
	Digest string
	reason string
	cause  error
}

func (e *GuestError) Error() string {
	d := e.Digest
	if len(d) > 12 {
		d = d[:12]
	}
	s := fmt.Sprintf("host: module %s: %s during %s", d, e.Code, e.Op)
	if e.reason != "" {
		s += ": " + e.reason
	}
	return s
}

// Unwrap returns context.DeadlineExceeded for gate.timeout,
// context.Canceled for gate.canceled, and nil otherwise.
func (e *GuestError) Unwrap() error { return e.cause }

// ReasonCode is the guest failure's code (gate.timeout, gate.trap, …), for
// callers that report it without importing host (a dry run, govhost eval).
func (e *GuestError) ReasonCode() string { return e.Code }

// DigestMismatchError refuses a module whose bytes do not hash to the
// expected digest.
type DigestMismatchError struct {
	Expected, Actual string
}

func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("host: module sha256 %s does not match the expected %s", e.Actual, e.Expected)
}

// guestError converts an internal failure into a GuestError.
func guestError(err error, digest string) error {
	if fe, ok := fault.As(err); ok {
		return &GuestError{Code: fe.Code, Op: fe.Op, Digest: digest, reason: fe.Reason, cause: fe.Cause}
	}
	return err
}

// DenyFor returns the deny verdict that stands for err: a deny with err's
// reason code for a *GuestError, with CodeHostError otherwise. It is what
// Evaluate returns alongside an error, offered to callers that fail other
// steps (Load, Gate) closed in the same way.
func DenyFor(err error) abi.GateOutput {
	var ge *GuestError
	if errors.As(err, &ge) {
		return deny(ge.Code)
	}
	return deny(CodeHostError)
}

func deny(code string) abi.GateOutput {
	return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: code}
}
