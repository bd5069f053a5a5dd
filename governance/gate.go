package governance

import (
	"time"

	"github.com/google/uuid"
)

// GateResult is one gate's binary verdict on one operation (ADR-0087 D4).
// The level comes from the policy binding, never from the gate. Detail is
// for humans and is never written into evidence.
type GateResult struct {
	ResultID      uuid.UUID    `json:"result_id"`
	GateID        string       `json:"gate_id"`
	Level         GateLevel    `json:"level"`
	Decision      GateDecision `json:"decision"`
	ReasonCode    string       `json:"reason_code"`
	Detail        *string      `json:"detail"`
	OperationID   uuid.UUID    `json:"operation_id"`
	PolicyVersion string       `json:"policy_version"`
	EvaluatedAt   time.Time    `json:"evaluated_at"`
}

// NewGateResult validates r and returns it with a result id (when absent),
// its time normalized, and its detail copied.
func NewGateResult(r GateResult) (GateResult, error) {
	if r.ResultID == uuid.Nil {
		r.ResultID = uuid.New()
	}
	switch {
	case r.GateID == "":
		return GateResult{}, &ValidationError{Field: "gate_id", Reason: "is required"}
	case !r.Level.Valid():
		return GateResult{}, &ValidationError{Field: "level", Reason: "unknown level " + string(r.Level)}
	case !r.Decision.Valid():
		return GateResult{}, &ValidationError{Field: "decision", Reason: "must be allow or deny"}
	case r.ReasonCode == "":
		return GateResult{}, &ValidationError{Field: "reason_code", Reason: "is required"}
	case r.OperationID == uuid.Nil:
		return GateResult{}, &ValidationError{Field: "operation_id", Reason: "is required"}
	case r.PolicyVersion == "":
		return GateResult{}, &ValidationError{Field: "policy_version", Reason: "is required"}
	}
	t, err := NormalizeTime("evaluated_at", r.EvaluatedAt)
	if err != nil {
		return GateResult{}, err
	}
	r.EvaluatedAt = t
	if r.Detail != nil {
		d := *r.Detail
		r.Detail = &d
	}
	return r, nil
}
