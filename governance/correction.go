package governance

import (
	"fmt"
	"sort"

	"github.com/google/uuid"
)

// Correction explains a RECORD_SUPERSEDED record (ADR-0087 D2): which
// earlier record it corrects, which of that record's approved fields, and
// why. Nothing is mutated: the superseded record stays on the chain and
// keeps counting (a superseded EXCEPTION_GRANTED still makes the task
// DEGRADED).
type Correction struct {
	SupersedesRecordID uuid.UUID
	// CorrectedFields names the corrected approved fields of the superseded
	// record's payload (or record fields); nonempty, no repeats.
	CorrectedFields []string
	// ReasonCode is a stable code saying why ("approver.misattributed").
	ReasonCode string
	// Corrections optionally holds the corrected approved values, by field;
	// every key must be in CorrectedFields.
	Corrections map[string]any
}

// Payload validates c and returns its approved payload: corrected_fields
// (sorted), reason_code and, when given, corrections.
func (c Correction) Payload() (map[string]any, error) {
	if c.SupersedesRecordID == uuid.Nil {
		return nil, &ValidationError{Field: "supersedes_record_id", Reason: "is required"}
	}
	fields := append([]string(nil), c.CorrectedFields...)
	sort.Strings(fields)
	p := map[string]any{"corrected_fields": fields, "reason_code": c.ReasonCode}
	if len(c.Corrections) > 0 {
		p["corrections"] = c.Corrections
	}
	if _, err := Canonical(p); err != nil {
		return nil, err
	}
	// Check the payload the way a verifier reads it back.
	v, _ := ParseJSON(mustCanonical(p))
	if err := CheckCorrectionPayload(v.(map[string]any)); err != nil {
		return nil, err
	}
	return p, nil
}

func mustCanonical(v any) []byte {
	b, err := Canonical(v)
	if err != nil {
		panic(err) // NB: callers checked Canonical first
	}
	return b
}

// CheckCorrectionPayload checks a RECORD_SUPERSEDED payload as read from a
// chain: corrected_fields a nonempty list of distinct nonempty strings,
// reason_code a nonempty string, corrections (optional) an object whose
// keys are corrected fields, nothing else.
func CheckCorrectionPayload(p map[string]any) error {
	for k := range p {
		if k != "corrected_fields" && k != "reason_code" && k != "corrections" {
			return &ValidationError{Field: k, Reason: "is not a field of a correction"}
		}
	}
	list, ok := p["corrected_fields"].([]any)
	if !ok || len(list) == 0 {
		return &ValidationError{Field: "corrected_fields", Reason: "must name at least one corrected field"}
	}
	named := map[string]bool{}
	for i, f := range list {
		s, ok := f.(string)
		if !ok || s == "" || named[s] {
			return &ValidationError{Field: fmt.Sprintf("corrected_fields[%d]", i), Reason: "must be a nonempty field name, named once"}
		}
		named[s] = true
	}
	if s, ok := p["reason_code"].(string); !ok || s == "" {
		return &ValidationError{Field: "reason_code", Reason: "is required"}
	}
	if raw, ok := p["corrections"]; ok {
		m, ok := raw.(map[string]any)
		if !ok {
			return &ValidationError{Field: "corrections", Reason: "must be an object"}
		}
		for k := range m {
			if !named[k] {
				return &ValidationError{Field: "corrections." + k, Reason: "is not among corrected_fields"}
			}
		}
	}
	return nil
}
