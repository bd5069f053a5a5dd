package governance

import (
	"encoding/json"
	"fmt"
)

// EvidenceType is the closed record taxonomy of ADR-0087 D2.
type EvidenceType string

const (
	PolicyBound       EvidenceType = "policy_bound"
	OperationStarted  EvidenceType = "operation_started"
	GateEvaluated     EvidenceType = "gate_evaluated"
	ExceptionGranted  EvidenceType = "exception_granted"
	OperationDenied   EvidenceType = "operation_denied"
	CallableCompleted EvidenceType = "callable_completed"
	CallableFailed    EvidenceType = "callable_failed"
	TaskClosed        EvidenceType = "task_closed"
	RecordSuperseded  EvidenceType = "record_superseded"
)

// EvidenceTypes lists the whole taxonomy in declaration order.
var EvidenceTypes = []EvidenceType{
	PolicyBound, OperationStarted, GateEvaluated, ExceptionGranted, OperationDenied,
	CallableCompleted, CallableFailed, TaskClosed, RecordSuperseded,
}

// Valid reports whether t belongs to the taxonomy.
func (t EvidenceType) Valid() bool { return oneOf(t, EvidenceTypes) }

// UnmarshalJSON refuses a type outside the taxonomy.
func (t *EvidenceType) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(b, t, EvidenceTypes, "record_type")
}

// VerificationFailureCode says why a chain or certificate failed to verify.
type VerificationFailureCode string

const (
	BrokenLink           VerificationFailureCode = "broken_link"
	ContentMismatch      VerificationFailureCode = "content_mismatch"
	MissingPolicy        VerificationFailureCode = "missing_policy"
	UnsupportedAlgorithm VerificationFailureCode = "unsupported_algorithm"
)

var verificationFailureCodes = []VerificationFailureCode{BrokenLink, ContentMismatch, MissingPolicy, UnsupportedAlgorithm}

// Valid reports whether c is one of the four codes.
func (c VerificationFailureCode) Valid() bool { return oneOf(c, verificationFailureCodes) }

// UnmarshalJSON refuses an unknown code.
func (c *VerificationFailureCode) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(b, c, verificationFailureCodes, "failure_code")
}

// GateLevel is how a gate's deny is enforced; it comes from the policy
// binding, never from the gate.
type GateLevel string

const (
	LevelHard     GateLevel = "hard"
	LevelSoft     GateLevel = "soft"
	LevelAdvisory GateLevel = "advisory"
)

var gateLevels = []GateLevel{LevelHard, LevelSoft, LevelAdvisory}

// Valid reports whether l is hard, soft or advisory.
func (l GateLevel) Valid() bool { return oneOf(l, gateLevels) }

// UnmarshalJSON refuses an unknown level.
func (l *GateLevel) UnmarshalJSON(b []byte) error { return unmarshalEnum(b, l, gateLevels, "level") }

// GateDecision is the binary verdict of ADR-0087 D4.
type GateDecision string

const (
	Allow GateDecision = "allow"
	Deny  GateDecision = "deny"
)

var gateDecisions = []GateDecision{Allow, Deny}

// Valid reports whether d is allow or deny.
func (d GateDecision) Valid() bool { return oneOf(d, gateDecisions) }

// UnmarshalJSON refuses anything but allow and deny.
func (d *GateDecision) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(b, d, gateDecisions, "decision")
}

// ProcessGrade grades process adherence of a certified task.
type ProcessGrade string

const (
	GradeFull     ProcessGrade = "FULL"
	GradeDegraded ProcessGrade = "DEGRADED"
)

var processGrades = []ProcessGrade{GradeFull, GradeDegraded}

// Valid reports whether g is FULL or DEGRADED.
func (g ProcessGrade) Valid() bool { return oneOf(g, processGrades) }

// UnmarshalJSON refuses an unknown grade.
func (g *ProcessGrade) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(b, g, processGrades, "process_grade")
}

// PolicyReleaseState is a snapshot's release state; activation is the only
// staged → active transition.
type PolicyReleaseState string

const (
	Staged PolicyReleaseState = "staged"
	Active PolicyReleaseState = "active"
)

var releaseStates = []PolicyReleaseState{Staged, Active}

// Valid reports whether s is staged or active.
func (s PolicyReleaseState) Valid() bool { return oneOf(s, releaseStates) }

// UnmarshalJSON refuses an unknown state.
func (s *PolicyReleaseState) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(b, s, releaseStates, "release_state")
}

// PolicyScope is a binding's routing scope. Labels route; they do not
// authenticate or isolate.
type PolicyScope string

const (
	ScopeGlobal   PolicyScope = "global"
	ScopeRole     PolicyScope = "role"
	ScopeResource PolicyScope = "resource"
)

var policyScopes = []PolicyScope{ScopeGlobal, ScopeRole, ScopeResource}

// Valid reports whether s is global, role or resource.
func (s PolicyScope) Valid() bool { return oneOf(s, policyScopes) }

// UnmarshalJSON refuses an unknown scope.
func (s *PolicyScope) UnmarshalJSON(b []byte) error {
	return unmarshalEnum(b, s, policyScopes, "scope")
}

func oneOf[T comparable](v T, set []T) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

func unmarshalEnum[T ~string](b []byte, dst *T, set []T, field string) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &ValidationError{Field: field, Reason: "must be a string"}
	}
	if !oneOf(T(s), set) {
		return &ValidationError{Field: field, Reason: fmt.Sprintf("unknown value %q (want one of %v)", s, set)}
	}
	*dst = T(s)
	return nil
}
