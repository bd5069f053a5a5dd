package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// CertificateIssuer mints task certificates from closed, verified task
// evidence only (ADR-0087 D6). A certificate states a narrow process claim
// and is not a signature.
type CertificateIssuer struct {
	Evidence evidence.Store
	Policies policy.Store
	// Now is the mint clock; nil means time.Now.
	Now func() time.Time
}

// Mint verifies the boundary's chain against expectedHead, checks that the
// chain ends with this boundary's TASK_CLOSED, that the exact policy
// version is retrievable with its digest, and that every started operation
// has exactly one terminal record; then it derives the gate summary and
// grade from committed records. Every refusal is a
// *governance.CertificateError.
func (ci *CertificateIssuer) Mint(ctx context.Context, boundary governance.ClosedTaskBoundary, expectedHead string) (governance.TaskCertificate, error) {
	b, err := governance.NewClosedTaskBoundary(boundary)
	if err != nil {
		return governance.TaskCertificate{}, &governance.CertificateError{Reason: err.Error()}
	}
	res, err := ci.Evidence.Verify(ctx, b.ChainID, expectedHead)
	if err != nil {
		return governance.TaskCertificate{}, fmt.Errorf("controller: mint: %w", err)
	}
	if !res.Valid {
		return governance.TaskCertificate{}, &governance.CertificateError{Code: res.FailureCode, Reason: "evidence chain does not verify against the expected head"}
	}
	recs, err := ci.Evidence.Read(ctx, b.ChainID, -1)
	if err != nil {
		return governance.TaskCertificate{}, fmt.Errorf("controller: mint: %w", err)
	}
	// Verify and Read are separate views: only the records up to the
	// verified head count.
	for len(recs) > 0 && recs[len(recs)-1].ChainHash != expectedHead {
		recs = recs[:len(recs)-1]
	}
	if err := checkClosed(recs, b); err != nil {
		return governance.TaskCertificate{}, err
	}
	if err := ci.checkPolicy(ctx, b); err != nil {
		return governance.TaskCertificate{}, err
	}
	summary, err := summarize(recs)
	if err != nil {
		return governance.TaskCertificate{}, err
	}
	grade := governance.GradeFull
	if summary.ExceptionCount > 0 {
		grade = governance.GradeDegraded
	}
	now := time.Now
	if ci.Now != nil {
		now = ci.Now
	}
	cert := governance.TaskCertificate{
		CertificateID: uuid.New(), TaskBoundaryID: b.TaskBoundaryID, PolicyID: b.PolicyID,
		PolicyVersion: b.PolicyVersion, EvidenceChainHead: expectedHead, GateSummary: summary,
		ProcessGrade: grade, MintedAt: now().UTC().Truncate(time.Microsecond),
	}
	return cert, cert.Validate()
}

func checkClosed(recs []governance.EvidenceRecord, b governance.ClosedTaskBoundary) error {
	closes := 0
	for i, r := range recs {
		if r.RecordType != governance.TaskClosed {
			continue
		}
		var p struct {
			TaskBoundaryID string `json:"task_boundary_id"`
		}
		if json.Unmarshal([]byte(r.PayloadJSON), &p) != nil || p.TaskBoundaryID != b.TaskBoundaryID.String() {
			continue
		}
		closes++
		if i != len(recs)-1 {
			return &governance.CertificateError{Reason: "records follow the task's TASK_CLOSED"}
		}
		if r.PolicyID != b.PolicyID || r.PolicyVersion != b.PolicyVersion {
			return &governance.CertificateError{Reason: "TASK_CLOSED pins another policy version"}
		}
	}
	if closes != 1 {
		return &governance.CertificateError{Reason: fmt.Sprintf("want exactly one TASK_CLOSED at the expected head, found %d", closes)}
	}
	return nil
}

func (ci *CertificateIssuer) checkPolicy(ctx context.Context, b governance.ClosedTaskBoundary) error {
	snap, err := ci.Policies.Get(ctx, b.PolicyID, b.PolicyVersion)
	if err != nil {
		return &governance.CertificateError{Code: governance.MissingPolicy, Reason: err.Error()}
	}
	digest, err := governance.PolicySnapshotDigest(snap.PolicyID(), snap.Version(), snap.GateBindings())
	if err != nil || digest != snap.Digest() {
		return &governance.CertificateError{Code: governance.MissingPolicy, Reason: "stored policy no longer matches its digest"}
	}
	return nil
}

// summarize derives the gate summary from committed records and checks
// that every started operation has exactly one terminal.
func summarize(recs []governance.EvidenceRecord) (governance.GateSummary, error) {
	var s governance.GateSummary
	started := map[uuid.UUID]bool{}
	terminals := map[uuid.UUID]int{}
	for _, r := range recs {
		switch r.RecordType {
		case governance.OperationStarted:
			started[r.OperationID.UUID] = true
		case governance.OperationDenied, governance.CallableCompleted, governance.CallableFailed:
			terminals[r.OperationID.UUID]++
		case governance.ExceptionGranted:
			s.ExceptionCount++
		case governance.GateEvaluated:
			var p struct {
				Level    governance.GateLevel    `json:"level"`
				Decision governance.GateDecision `json:"decision"`
			}
			if err := json.Unmarshal([]byte(r.PayloadJSON), &p); err != nil {
				return s, &governance.CertificateError{Reason: "GATE_EVALUATED record " + r.RecordID.String() + " has no valid level and decision"}
			}
			s.Add(p.Level, p.Decision)
		}
	}
	for _, r := range recs {
		if r.RecordType != governance.OperationStarted {
			continue
		}
		switch op := r.OperationID.UUID; terminals[op] {
		case 1:
		case 0:
			return s, &governance.CertificateError{Reason: fmt.Sprintf("operation %s has no terminal record: it was authorized and never completed", op)}
		default:
			return s, &governance.CertificateError{Reason: fmt.Sprintf("operation %s has %d terminal records, want 1", op, terminals[op])}
		}
	}
	for op := range terminals {
		if !started[op] {
			return s, &governance.CertificateError{Reason: fmt.Sprintf("terminal record for operation %s that never started", op)}
		}
	}
	return s, nil
}
