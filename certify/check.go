package certify

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// Evidence is what a certificate is checked against: the closed boundary,
// its chain (up to and including the expected head) and the exact policy
// snapshot the task pinned (nil when it could not be retrieved).
type Evidence struct {
	Boundary     governance.ClosedTaskBoundary
	Records      []governance.EvidenceRecord
	ExpectedHead string
	Policy       *governance.PolicySnapshot
}

// Outcome is what the evidence supports: the recounted gate summary and
// the grade.
type Outcome struct {
	Summary governance.GateSummary
	Grade   governance.ProcessGrade
	// Checked is the number of records verified.
	Checked int64
}

// Check runs every mint rule over ev, in this order, and returns the first
// failure as a *governance.CertificateError naming its rule:
//
//  1. boundary: closed_at at or after opened_at, every id present;
//  2. chain: the records verify to ExpectedHead (ADR-0087 D3's codes);
//  3. task_records: every record is on the boundary's chain, and every
//     record naming a task names this one;
//  4. task_closed: exactly one TASK_CLOSED of this boundary, at the head or
//     followed only by RECORD_SUPERSEDED corrections, with the boundary's
//     times;
//  5. policy: the snapshot is the task's exact version and its digest
//     recomputes (missing_policy);
//  6. operation_policy: every record pins the task's policy id and
//     version, and every digest a record names is the snapshot's;
//  7. deny_then_call, terminal: per operation, exactly one terminal after
//     its start, and no callable terminal after OPERATION_DENIED or a
//     blocking deny;
//  8. gate_coverage: before a callable terminal, a GATE_EVALUATED (phase
//     check) for every binding that applies to the tool — and phase
//     recheck for every check binding when a transform applies or a
//     recheck was recorded — each with its binding's level and module;
//  9. exception: every excused soft deny names an earlier exception grant
//     of that gate, tool and actor, valid at the time, used once;
//  10. correction: every RECORD_SUPERSEDED names an earlier record and the
//     fields it corrects.
//
// The gate summary is recounted from GATE_EVALUATED records; the grade is
// DEGRADED iff any EXCEPTION_GRANTED is on the chain, whatever corrects it
// later.
func Check(ev Evidence) (Outcome, error) {
	b, err := governance.NewClosedTaskBoundary(ev.Boundary)
	if err != nil {
		return Outcome{}, refuse(governance.RuleBoundary, "", "", err.Error())
	}
	res := evidence.VerifyRecords(ev.Records, ev.ExpectedHead)
	if !res.Valid {
		id := ""
		if res.FailedRecordID.Valid {
			id = res.FailedRecordID.UUID.String()
		}
		return Outcome{}, refuse(governance.RuleChain, res.FailureCode, id, "evidence chain does not verify against the expected head")
	}
	c := &checker{b: b, recs: ev.Records, snap: ev.Policy}
	if err := c.parse(); err != nil {
		return Outcome{}, err
	}
	for _, step := range []func() error{c.taskRecords, c.taskClosed, c.policy, c.operationPolicy, c.operations, c.corrections} {
		if err := step(); err != nil {
			return Outcome{}, err
		}
	}
	out := Outcome{Summary: c.summary, Grade: governance.GradeFull, Checked: res.CheckedRecords}
	if c.summary.ExceptionCount > 0 {
		out.Grade = governance.GradeDegraded
	}
	return out, nil
}

func refuse(rule governance.CertificateRule, code governance.VerificationFailureCode, recordID, reason string) error {
	return &governance.CertificateError{Rule: rule, Code: code, RecordID: recordID, Reason: reason}
}

// checker holds one Check's parsed records.
type checker struct {
	b        governance.ClosedTaskBoundary
	recs     []governance.EvidenceRecord
	payloads []payload
	// gate holds the typed payload of every GATE_EVALUATED, by index.
	gate    map[int]governance.GateEvaluatedPayload
	snap    *governance.PolicySnapshot
	summary governance.GateSummary
}

func (c *checker) parse() error {
	c.payloads = make([]payload, len(c.recs))
	c.gate = map[int]governance.GateEvaluatedPayload{}
	for i, r := range c.recs {
		p, err := parsePayload(r.PayloadJSON)
		if err != nil {
			return refuse(governance.RuleChain, governance.ContentMismatch, r.RecordID.String(), "payload_json is not a canonical JSON object")
		}
		c.payloads[i] = p
		if r.RecordType == governance.GateEvaluated {
			g, err := governance.ParseGateEvaluated(p.m)
			if err != nil {
				return refuse(governance.RulePayload, "", r.RecordID.String(), "GATE_EVALUATED payload: "+err.Error())
			}
			c.gate[i] = g
		}
	}
	return nil
}

func (c *checker) taskRecords() error {
	for i, r := range c.recs {
		if r.ChainID != c.b.ChainID {
			return refuse(governance.RuleTaskRecords, governance.BrokenLink, r.RecordID.String(), fmt.Sprintf("record of chain %s in the chain of task %s", r.ChainID, c.b.TaskBoundaryID))
		}
		if id, ok := c.payloads[i].str("task_boundary_id"); ok && id != c.b.TaskBoundaryID.String() {
			return refuse(governance.RuleTaskRecords, governance.BrokenLink, r.RecordID.String(), fmt.Sprintf("record of task %s in the chain of task %s", id, c.b.TaskBoundaryID))
		}
	}
	return nil
}

func (c *checker) taskClosed() error {
	closeAt := -1
	for i, r := range c.recs {
		if r.RecordType != governance.TaskClosed {
			continue
		}
		if closeAt >= 0 {
			return refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "the task is closed twice")
		}
		closeAt = i
	}
	if closeAt < 0 {
		return refuse(governance.RuleTaskClosed, "", "", "no TASK_CLOSED at the expected head: the boundary is open")
	}
	for _, r := range c.recs[closeAt+1:] {
		if r.RecordType != governance.RecordSuperseded {
			return refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "records follow the task's TASK_CLOSED")
		}
	}
	r, p := c.recs[closeAt], c.payloads[closeAt]
	opened, _ := p.time("opened_at")
	closed, _ := p.time("closed_at")
	switch {
	case !p.has("task_boundary_id"):
		return refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "TASK_CLOSED names no task")
	case !opened.Equal(c.b.OpenedAt) || !closed.Equal(c.b.ClosedAt):
		return refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "TASK_CLOSED records other times than the boundary")
	}
	return nil
}

func (c *checker) policy() error {
	if c.snap == nil {
		return refuse(governance.RulePolicy, governance.MissingPolicy, "", fmt.Sprintf("policy %s@%s is not available", c.b.PolicyID, c.b.PolicyVersion))
	}
	s := c.snap
	if s.PolicyID() != c.b.PolicyID || s.Version() != c.b.PolicyVersion {
		return refuse(governance.RulePolicy, governance.MissingPolicy, "", fmt.Sprintf("the policy snapshot is %s, the task pinned %s@%s", s.Ref(), c.b.PolicyID, c.b.PolicyVersion))
	}
	digest, err := governance.PolicySnapshotDigest(s.PolicyID(), s.Version(), s.GateBindings())
	if err != nil || digest != s.Digest() {
		return refuse(governance.RulePolicy, governance.MissingPolicy, "", "the policy snapshot's digest does not recompute")
	}
	// A task can pin only an active snapshot (the controller refuses any
	// other): a staged one in the evidence was never in force.
	if !s.IsActive() || s.ActivatedAt().IsZero() {
		return refuse(governance.RulePolicy, governance.MissingPolicy, "", fmt.Sprintf("the policy snapshot is %s, not active with its activation time: it never governed a task", s.ReleaseState()))
	}
	return nil
}

func (c *checker) operationPolicy() error {
	for i, r := range c.recs {
		if r.PolicyID != c.b.PolicyID || r.PolicyVersion != c.b.PolicyVersion {
			return refuse(governance.RuleOperationPolicy, "", r.RecordID.String(), fmt.Sprintf("record pins policy %s@%s, the task pins %s@%s", r.PolicyID, r.PolicyVersion, c.b.PolicyID, c.b.PolicyVersion))
		}
		if d, ok := c.payloads[i].str("policy_digest"); ok && d != c.snap.Digest() {
			return refuse(governance.RuleOperationPolicy, "", r.RecordID.String(), "record names policy digest "+d+", the task's policy has "+c.snap.Digest())
		}
	}
	return nil
}

func (c *checker) corrections() error {
	index := map[uuid.UUID]int{}
	for i, r := range c.recs {
		index[r.RecordID] = i
		if r.RecordType != governance.RecordSuperseded {
			if r.SupersedesRecordID.Valid {
				return refuse(governance.RuleCorrection, "", r.RecordID.String(), "only a RECORD_SUPERSEDED may name a superseded record")
			}
			continue
		}
		if !r.SupersedesRecordID.Valid {
			return refuse(governance.RuleCorrection, "", r.RecordID.String(), "RECORD_SUPERSEDED names no record")
		}
		if _, ok := index[r.SupersedesRecordID.UUID]; !ok || r.SupersedesRecordID.UUID == r.RecordID {
			return refuse(governance.RuleCorrection, "", r.RecordID.String(), "RECORD_SUPERSEDED names no earlier record of the chain")
		}
		if err := governance.CheckCorrectionPayload(c.payloads[i].m); err != nil {
			return refuse(governance.RuleCorrection, "", r.RecordID.String(), err.Error())
		}
	}
	return nil
}
