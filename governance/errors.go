package governance

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is matched (errors.Is) by every validation failure of a
// governance value.
var ErrInvalid = errors.New("governance: invalid value")

// ValidationError says which field of a governance value is invalid and why.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("governance: invalid %s: %s", e.Field, e.Reason)
}

func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// ErrNotCanonical is matched by every *CanonicalError.
var ErrNotCanonical = errors.New("governance: value is not approved for canonical encoding")

// CanonicalError refuses a value canonical encoding does not approve. Path
// locates it from the root ("$", "$[\"payload\"][2]").
type CanonicalError struct {
	Path   string
	Reason string
}

func (e *CanonicalError) Error() string {
	return fmt.Sprintf("governance: value at %s is not approved: %s", e.Path, e.Reason)
}

func (e *CanonicalError) Is(target error) bool { return target == ErrNotCanonical }

// EvidenceIntegrityError reports a record whose content does not match its
// digests or is otherwise malformed: nothing was appended.
type EvidenceIntegrityError struct {
	RecordID string
	Reason   string
}

func (e *EvidenceIntegrityError) Error() string {
	return fmt.Sprintf("governance: evidence record %s fails integrity: %s", e.RecordID, e.Reason)
}

// ConflictKind names which compare-and-append rule a record broke.
type ConflictKind string

const (
	ConflictSequence          ConflictKind = "wrong_sequence"
	ConflictStaleHead         ConflictKind = "stale_previous_hash"
	ConflictDuplicateRecordID ConflictKind = "duplicate_record_id"
	ConflictDuplicateHash     ConflictKind = "duplicate_chain_hash"
)

// EvidenceConflictError reports an append that does not fit the chain's
// current head: nothing was appended. It is never retried silently.
type EvidenceConflictError struct {
	ChainID  string
	RecordID string
	Kind     ConflictKind
	Reason   string
}

func (e *EvidenceConflictError) Error() string {
	return fmt.Sprintf("governance: evidence conflict on chain %s (%s): %s", e.ChainID, e.Kind, e.Reason)
}

// GovernanceEvidenceError reports that evidence required by the governed
// call could not be appended. CallExecuted says whether the tool's callable
// had already run (its side effect happened without completion evidence).
type GovernanceEvidenceError struct {
	OperationID  string
	CallExecuted bool
	Err          error
}

func (e *GovernanceEvidenceError) Error() string {
	return fmt.Sprintf("governance: evidence for operation %s not recorded (call executed: %t): %v", e.OperationID, e.CallExecuted, e.Err)
}

func (e *GovernanceEvidenceError) Unwrap() error { return e.Err }

// OutcomeEvidenceError reports that the callable failed and its
// CALLABLE_FAILED record could not be written either. The operation is
// uncertifiable.
type OutcomeEvidenceError struct {
	OperationID string
	CallErr     error
	StoreErr    error
}

func (e *OutcomeEvidenceError) Error() string {
	return fmt.Sprintf("governance: operation %s failed (%v) and its failure was not recorded: %v", e.OperationID, e.CallErr, e.StoreErr)
}

func (e *OutcomeEvidenceError) Unwrap() []error { return []error{e.CallErr, e.StoreErr} }

// GovernanceDeniedError is a recorded denial: the callable was not reached.
// Message is the deciding gate's model-facing text (never recorded); the
// error text itself carries only the stable reason code.
type GovernanceDeniedError struct {
	Function    string
	OperationID string
	GateID      string
	ReasonCode  string
	Message     string
}

func (e *GovernanceDeniedError) Error() string {
	return fmt.Sprintf("governance: %s denied (operation %s, gate %s): %s", e.Function, e.OperationID, e.GateID, e.ReasonCode)
}

// GovernanceBypassError reports a governed tool reached on a route that
// skips its controller, its context, or its pin. The callable was not reached.
type GovernanceBypassError struct {
	Tool   string
	Reason string
}

func (e *GovernanceBypassError) Error() string {
	return fmt.Sprintf("governance: bypass of governed tool %s refused: %s", e.Tool, e.Reason)
}

// PolicyConflictError reports a policy id and version already stored with
// another digest.
type PolicyConflictError struct {
	PolicyID       string
	Version        string
	StoredDigest   string
	ProposedDigest string
}

func (e *PolicyConflictError) Error() string {
	return fmt.Sprintf("governance: policy %s version %s already stored with digest %s (proposed %s)", e.PolicyID, e.Version, e.StoredDigest, e.ProposedDigest)
}

// PolicyNotFoundError reports that no policy matches a lookup or resolution.
type PolicyNotFoundError struct {
	PolicyID string
	Version  string
	Role     string
	Resource string
}

func (e *PolicyNotFoundError) Error() string {
	if e.PolicyID != "" {
		return fmt.Sprintf("governance: policy %s version %s not found", e.PolicyID, e.Version)
	}
	return fmt.Sprintf("governance: no policy bound for role %q resource %q", e.Role, e.Resource)
}

// AmbiguousPolicyError reports more than one distinct policy version at the
// highest matching precedence.
type AmbiguousPolicyError struct {
	Scope      string
	Candidates []string
}

func (e *AmbiguousPolicyError) Error() string {
	return fmt.Sprintf("governance: ambiguous policy resolution at scope %s: %v", e.Scope, e.Candidates)
}

// CertificateError refuses to mint or to verify a certificate. Rule names
// the check that failed (see CertificateRule); Code is set when the
// refusal is one of ADR-0087's verification failures (BROKEN_LINK,
// CONTENT_MISMATCH, UNSUPPORTED_ALGORITHM, MISSING_POLICY); RecordID names
// the record at fault when there is one.
type CertificateError struct {
	Rule     CertificateRule
	Code     VerificationFailureCode
	RecordID string
	Reason   string
}

func (e *CertificateError) Error() string {
	var b strings.Builder
	b.WriteString("governance: certificate refused")
	if e.Rule != "" || e.Code != "" {
		b.WriteString(" (")
		b.WriteString(string(e.Rule))
		if e.Rule != "" && e.Code != "" {
			b.WriteString(", ")
		}
		b.WriteString(string(e.Code))
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	if e.RecordID != "" {
		b.WriteString(" (record ")
		b.WriteString(e.RecordID)
		b.WriteString(")")
	}
	return b.String()
}

// ErrStoreUnavailable is matched (errors.Is) by every error of a store
// that could not be reached or did not answer (a database down,
// restarting, or past its statement timeout). It says nothing was
// decided: a policy lookup that fails with it is not a policy verdict, and
// an append that fails with it appended nothing (or, when the error also
// says the commit is unknown, may have: see the store's docs).
var ErrStoreUnavailable = errors.New("governance: store unavailable")
