package service

import (
	"errors"
	"fmt"

	"github.com/govhost/govhost/governance"
)

// Code is a stable, machine-readable reason a request was refused. The
// server maps each to one HTTP status; clients match on it.
type Code string

const (
	CodeInvalidRequest Code = "invalid_request"  // a field is missing or malformed
	CodeTaskNotFound   Code = "task_not_found"   // unknown, or already closed
	CodePolicyNotFound Code = "policy_not_found" // no such policy version, or nothing resolves
	CodePolicyInvalid  Code = "policy_invalid"   // a policy file or version the rules refuse
	CodePolicyConflict Code = "policy_conflict"  // a stored version never changes
	// CodeBindAmbiguous: the scope is bound to another version; binding
	// this one too would make resolution ambiguous (unbind the other first).
	CodeBindAmbiguous    Code = "bind_ambiguous"
	CodeModuleNotFound   Code = "module_not_found" // a gate module digest that is not here
	CodeChainNotFound    Code = "chain_not_found"  // no records for this chain id
	CodeNotMintable      Code = "not_mintable"     // the task's evidence does not support a certificate
	CodeCertNotFound     Code = "certificate_not_found"
	CodeApprovalNotFound Code = "approval_not_found" // not pending (resolved, dropped, or never)
	CodeAuthzNotFound    Code = "authorization_not_found"
	CodePermitUnknown    Code = "permit_unknown"
	CodePermitUsed       Code = "permit_used"
	CodePermitExpired    Code = "permit_expired"
	CodePermitWrongTask  Code = "permit_wrong_task"
	CodeTaskClosed       Code = "task_closed"
	CodeTooManyTasks     Code = "too_many_open_tasks"
	CodeUnavailable      Code = "unavailable" // evidence could not be recorded; nothing was decided
	// CodeEvidenceConflict: another writer (another govhost server on the
	// same database) moved the chain's head first; nothing was appended
	// and nothing is retried.
	CodeEvidenceConflict Code = "evidence_conflict"
)

// evidenceFailure is the refusal for evidence that could not be recorded:
// a conflict with another writer has its own code, everything else
// (the store unreachable, a full disk) is unavailable.
func evidenceFailure(err error) *Error {
	var ce *governance.EvidenceConflictError
	if errors.As(err, &ce) {
		return fail(CodeEvidenceConflict, err)
	}
	return fail(CodeUnavailable, err)
}

// Error is a refused request: a stable code and a message for people.
type Error struct {
	Code    Code
	Message string
	Err     error
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }
func (e *Error) Unwrap() error { return e.Err }

func fail(code Code, err error) *Error { return &Error{Code: code, Message: err.Error(), Err: err} }

func failf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of a refusal, or "" for an internal error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
