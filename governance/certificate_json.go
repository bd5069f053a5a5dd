package governance

import (
	"encoding/json"
)

// The wire forms of certificates and boundaries: times in TimeLayout
// (ADR-0087 D2's one form, like records), decoding strict like records
// (exact keys, each once, every field present).

var (
	certificateFields = []string{"certificate_id", "task_boundary_id", "policy_id", "policy_version", "evidence_chain_head", "gate_summary", "process_grade", "minted_at"}
	gateSummaryFields = []string{"hard_allow", "hard_deny", "soft_allow", "soft_deny", "advisory_allow", "advisory_deny", "exception_count"}
	boundaryFields    = []string{"task_boundary_id", "chain_id", "policy_id", "policy_version", "opened_at", "closed_at"}
)

type certificateJSON struct {
	CertificateID     string       `json:"certificate_id"`
	TaskBoundaryID    string       `json:"task_boundary_id"`
	PolicyID          string       `json:"policy_id"`
	PolicyVersion     string       `json:"policy_version"`
	EvidenceChainHead string       `json:"evidence_chain_head"`
	GateSummary       GateSummary  `json:"gate_summary"`
	ProcessGrade      ProcessGrade `json:"process_grade"`
	MintedAt          string       `json:"minted_at"`
}

// MarshalJSON writes the certificate with minted_at in TimeLayout.
func (c TaskCertificate) MarshalJSON() ([]byte, error) {
	return marshalPolicyJSON(certificateJSON{
		CertificateID: c.CertificateID.String(), TaskBoundaryID: c.TaskBoundaryID.String(),
		PolicyID: c.PolicyID.String(), PolicyVersion: c.PolicyVersion, EvidenceChainHead: c.EvidenceChainHead,
		GateSummary: c.GateSummary, ProcessGrade: c.ProcessGrade, MintedAt: FormatTime(c.MintedAt),
	})
}

// UnmarshalJSON reads a certificate strictly: exact keys, each once, ids
// canonical, minted_at exactly in TimeLayout; then Validate.
func (c *TaskCertificate) UnmarshalJSON(b []byte) error {
	o, err := readObject(b, "certificate", certificateFields)
	if err != nil {
		return err
	}
	var out TaskCertificate
	if out.CertificateID, err = o.uuid("certificate_id"); err != nil {
		return err
	}
	if out.TaskBoundaryID, err = o.uuid("task_boundary_id"); err != nil {
		return err
	}
	if out.PolicyID, err = o.uuid("policy_id"); err != nil {
		return err
	}
	if out.PolicyVersion, err = o.str("policy_version"); err != nil {
		return err
	}
	if out.EvidenceChainHead, err = o.digest("evidence_chain_head"); err != nil {
		return err
	}
	s, err := o.object("gate_summary", gateSummaryFields)
	if err != nil {
		return err
	}
	counts := []*int{&out.GateSummary.HardAllow, &out.GateSummary.HardDeny, &out.GateSummary.SoftAllow, &out.GateSummary.SoftDeny, &out.GateSummary.AdvisoryAllow, &out.GateSummary.AdvisoryDeny, &out.GateSummary.ExceptionCount}
	for i, f := range gateSummaryFields {
		n, err := s.count(f)
		if err != nil {
			return &ValidationError{Field: "gate_summary." + f, Reason: err.(*ValidationError).Reason}
		}
		if n > 1<<31 {
			return &ValidationError{Field: "gate_summary." + f, Reason: "integer out of range"}
		}
		*counts[i] = int(n)
	}
	grade, err := o.str("process_grade")
	if err != nil {
		return err
	}
	out.ProcessGrade = ProcessGrade(grade)
	if out.MintedAt, err = o.timestamp("minted_at"); err != nil {
		return err
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*c = out
	return nil
}

type boundaryJSON struct {
	TaskBoundaryID string `json:"task_boundary_id"`
	ChainID        string `json:"chain_id"`
	PolicyID       string `json:"policy_id"`
	PolicyVersion  string `json:"policy_version"`
	OpenedAt       string `json:"opened_at"`
	ClosedAt       string `json:"closed_at"`
}

// MarshalJSON writes the boundary with its times in TimeLayout.
func (b ClosedTaskBoundary) MarshalJSON() ([]byte, error) {
	return marshalPolicyJSON(boundaryJSON{
		TaskBoundaryID: b.TaskBoundaryID.String(), ChainID: b.ChainID.String(), PolicyID: b.PolicyID.String(),
		PolicyVersion: b.PolicyVersion, OpenedAt: FormatTime(b.OpenedAt), ClosedAt: FormatTime(b.ClosedAt),
	})
}

// UnmarshalJSON reads a boundary strictly, then NewClosedTaskBoundary's
// checks (closed at or after opened).
func (b *ClosedTaskBoundary) UnmarshalJSON(data []byte) error {
	o, err := readObject(data, "boundary", boundaryFields)
	if err != nil {
		return err
	}
	var out ClosedTaskBoundary
	if out.TaskBoundaryID, err = o.uuid("task_boundary_id"); err != nil {
		return err
	}
	if out.ChainID, err = o.uuid("chain_id"); err != nil {
		return err
	}
	if out.PolicyID, err = o.uuid("policy_id"); err != nil {
		return err
	}
	if out.PolicyVersion, err = o.str("policy_version"); err != nil {
		return err
	}
	if out.OpenedAt, err = o.timestamp("opened_at"); err != nil {
		return err
	}
	if out.ClosedAt, err = o.timestamp("closed_at"); err != nil {
		return err
	}
	if out, err = NewClosedTaskBoundary(out); err != nil {
		return err
	}
	*b = out
	return nil
}

var _ json.Marshaler = TaskCertificate{}
