package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/certify"
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

// Mint verifies the boundary's chain in the store against expectedHead,
// reads it up to that head with the task's exact policy version, and runs
// certify.Check over them — the same checks an offline verifier runs on a
// bundle: the chain ends with this boundary's TASK_CLOSED, the policy
// digest recomputes, every operation pins the task's policy, has exactly
// one terminal, ran every applicable gate before its callable and never
// reached it after a deny. The gate summary and grade come from the
// committed records. Every refusal is a *governance.CertificateError
// naming its rule; store read failures are returned as they are.
func (ci *CertificateIssuer) Mint(ctx context.Context, boundary governance.ClosedTaskBoundary, expectedHead string) (governance.TaskCertificate, error) {
	b, err := governance.NewClosedTaskBoundary(boundary)
	if err != nil {
		return governance.TaskCertificate{}, &governance.CertificateError{Rule: governance.RuleBoundary, Reason: err.Error()}
	}
	res, err := ci.Evidence.Verify(ctx, b.ChainID, expectedHead)
	if err != nil {
		return governance.TaskCertificate{}, fmt.Errorf("controller: mint: %w", err)
	}
	if !res.Valid {
		id := ""
		if res.FailedRecordID.Valid {
			id = res.FailedRecordID.UUID.String()
		}
		return governance.TaskCertificate{}, &governance.CertificateError{Rule: governance.RuleChain, Code: res.FailureCode, RecordID: id, Reason: "evidence chain does not verify against the expected head"}
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
	ev := certify.Evidence{Boundary: b, Records: recs, ExpectedHead: expectedHead}
	snap, err := ci.Policies.Get(ctx, b.PolicyID, b.PolicyVersion)
	var nf *governance.PolicyNotFoundError
	switch {
	case err == nil:
		ev.Policy = &snap
	case errors.As(err, &nf):
	default:
		return governance.TaskCertificate{}, &governance.CertificateError{Rule: governance.RulePolicy, Code: governance.MissingPolicy, Reason: err.Error()}
	}
	out, err := certify.Check(ev)
	if err != nil {
		return governance.TaskCertificate{}, err
	}
	now := time.Now
	if ci.Now != nil {
		now = ci.Now
	}
	cert := governance.TaskCertificate{
		CertificateID: uuid.New(), TaskBoundaryID: b.TaskBoundaryID, PolicyID: b.PolicyID,
		PolicyVersion: b.PolicyVersion, EvidenceChainHead: expectedHead, GateSummary: out.Summary,
		ProcessGrade: out.Grade, MintedAt: now().UTC().Truncate(time.Microsecond),
	}
	return cert, cert.Validate()
}
