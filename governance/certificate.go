package governance

import (
	"time"

	"github.com/google/uuid"
)

// ClosedTaskBoundary is a task whose TASK_CLOSED record was appended: the
// only thing a certificate can be minted from (ADR-0087 D6).
type ClosedTaskBoundary struct {
	TaskBoundaryID uuid.UUID `json:"task_boundary_id"`
	ChainID        uuid.UUID `json:"chain_id"`
	PolicyID       uuid.UUID `json:"policy_id"`
	PolicyVersion  string    `json:"policy_version"`
	OpenedAt       time.Time `json:"opened_at"`
	ClosedAt       time.Time `json:"closed_at"`
}

// NewClosedTaskBoundary validates b: every id, UTC µs times, closed at or
// after opened.
func NewClosedTaskBoundary(b ClosedTaskBoundary) (ClosedTaskBoundary, error) {
	switch {
	case b.TaskBoundaryID == uuid.Nil:
		return ClosedTaskBoundary{}, &ValidationError{Field: "task_boundary_id", Reason: "is required"}
	case b.ChainID == uuid.Nil:
		return ClosedTaskBoundary{}, &ValidationError{Field: "chain_id", Reason: "is required"}
	case b.PolicyID == uuid.Nil:
		return ClosedTaskBoundary{}, &ValidationError{Field: "policy_id", Reason: "is required"}
	case b.PolicyVersion == "":
		return ClosedTaskBoundary{}, &ValidationError{Field: "policy_version", Reason: "is required"}
	}
	var err error
	if b.OpenedAt, err = NormalizeTime("opened_at", b.OpenedAt); err != nil {
		return ClosedTaskBoundary{}, err
	}
	if b.ClosedAt, err = NormalizeTime("closed_at", b.ClosedAt); err != nil {
		return ClosedTaskBoundary{}, err
	}
	if b.ClosedAt.Before(b.OpenedAt) {
		return ClosedTaskBoundary{}, &ValidationError{Field: "closed_at", Reason: "must be at or after opened_at"}
	}
	return b, nil
}

// GateSummary counts committed GATE_EVALUATED results by level and
// decision, and EXCEPTION_GRANTED records. It is derived from evidence,
// never supplied by a caller.
type GateSummary struct {
	HardAllow      int `json:"hard_allow"`
	HardDeny       int `json:"hard_deny"`
	SoftAllow      int `json:"soft_allow"`
	SoftDeny       int `json:"soft_deny"`
	AdvisoryAllow  int `json:"advisory_allow"`
	AdvisoryDeny   int `json:"advisory_deny"`
	ExceptionCount int `json:"exception_count"`
}

// Add counts one gate result.
func (s *GateSummary) Add(level GateLevel, d GateDecision) {
	switch {
	case level == LevelHard && d == Allow:
		s.HardAllow++
	case level == LevelHard && d == Deny:
		s.HardDeny++
	case level == LevelSoft && d == Allow:
		s.SoftAllow++
	case level == LevelSoft && d == Deny:
		s.SoftDeny++
	case level == LevelAdvisory && d == Allow:
		s.AdvisoryAllow++
	case level == LevelAdvisory && d == Deny:
		s.AdvisoryDeny++
	}
}

// TaskCertificate states a narrow process claim: the declared checks ran
// under a retrievable policy and the evidence chain verifies up to
// EvidenceChainHead. It says nothing about the tools' results and is not a
// signature.
type TaskCertificate struct {
	CertificateID     uuid.UUID    `json:"certificate_id"`
	TaskBoundaryID    uuid.UUID    `json:"task_boundary_id"`
	PolicyID          uuid.UUID    `json:"policy_id"`
	PolicyVersion     string       `json:"policy_version"`
	EvidenceChainHead string       `json:"evidence_chain_head"`
	GateSummary       GateSummary  `json:"gate_summary"`
	ProcessGrade      ProcessGrade `json:"process_grade"`
	MintedAt          time.Time    `json:"minted_at"`
}

// Validate checks the certificate's shape.
func (c TaskCertificate) Validate() error {
	switch {
	case c.CertificateID == uuid.Nil:
		return &ValidationError{Field: "certificate_id", Reason: "is required"}
	case c.TaskBoundaryID == uuid.Nil:
		return &ValidationError{Field: "task_boundary_id", Reason: "is required"}
	case c.PolicyID == uuid.Nil:
		return &ValidationError{Field: "policy_id", Reason: "is required"}
	case !c.ProcessGrade.Valid():
		return &ValidationError{Field: "process_grade", Reason: "must be FULL or DEGRADED"}
	case c.MintedAt.IsZero():
		return &ValidationError{Field: "minted_at", Reason: "is required"}
	}
	for _, n := range []int{c.GateSummary.HardAllow, c.GateSummary.HardDeny, c.GateSummary.SoftAllow, c.GateSummary.SoftDeny, c.GateSummary.AdvisoryAllow, c.GateSummary.AdvisoryDeny, c.GateSummary.ExceptionCount} {
		if n < 0 {
			return &ValidationError{Field: "gate_summary", Reason: "counts must be >= 0"}
		}
	}
	return checkDigest("evidence_chain_head", c.EvidenceChainHead)
}
