package certify

import (
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/governance"
)

// VerifyOptions says what the verifier trusts.
type VerifyOptions struct {
	// Keys are the verifier keys (checkpoint.Keyring.VerifierKey) the
	// verifier trusts. With none, the bundle is checked but unauthenticated.
	Keys []string
	// Later are signed checkpoints from the operator's log (any chain):
	// those of the bundle's chain must agree with it, so a chain truncated
	// or rolled back to an earlier valid head is caught.
	Later [][]byte
}

// Report is the outcome of an offline verification, printed as JSON by
// govhost cert verify. Valid is false when any rule failed; Rule, Code,
// RecordID and Reason then say which and why.
type Report struct {
	Valid             bool                                `json:"valid"`
	Rule              *governance.CertificateRule         `json:"rule"`
	FailureCode       *governance.VerificationFailureCode `json:"failure_code"`
	FailedRecordID    *string                             `json:"failed_record_id"`
	Reason            *string                             `json:"reason"`
	TaskBoundaryID    string                              `json:"task_boundary_id"`
	ChainID           *string                             `json:"chain_id"`
	EvidenceChainHead string                              `json:"evidence_chain_head"`
	CheckedRecords    int64                               `json:"checked_records"`
	ProcessGrade      governance.ProcessGrade             `json:"process_grade"`
	// Authenticated is true only when a trusted key signed the bundle's
	// checkpoint of this head.
	Authenticated bool   `json:"authenticated"`
	Checkpoint    string `json:"checkpoint"`
	// CheckpointSize and CheckpointHead are what the bundle's checkpoint
	// commits to (null when absent or unreadable), reported even when a
	// rule failed before it was compared with the chain.
	CheckpointSize *int64  `json:"checkpoint_size"`
	CheckpointHead *string `json:"checkpoint_head"`
	// SignedBy names the trusted key ("name+hash") that signed it.
	SignedBy *string `json:"signed_by"`
	// LaterCheckpoints counts the operator's checkpoints of this chain the
	// bundle was checked against.
	LaterCheckpoints int `json:"later_checkpoints"`
}

// Checkpoint states in a Report. The bundle's checkpoint is read before
// any rule runs, so the report says what was found even when an earlier
// rule fails.
const (
	CheckpointAuthenticated   = "authenticated"
	CheckpointUnauthenticated = "unauthenticated: no verifier key given, the signature was not checked"
	CheckpointAbsent          = "absent: the bundle is not signed"
	// CheckpointRefused prefixes the reason a present checkpoint could not
	// be accepted (malformed, signed by no trusted key, bad signature).
	CheckpointRefused = "refused: "
)

// Verify re-derives everything a certificate claims from the bundle alone
// and reports the first rule that fails: the chain is found by the
// certificate's TASK_CLOSED, then Check runs (chain against the
// certificate's head, policy digest recomputed, TASK_CLOSED at the head,
// terminals, gate coverage, denials), then the certificate's gate summary,
// grade and times are compared with what the evidence gives, then the
// bundle's checkpoint (size and head of this chain; signature when keys
// are given) and every later checkpoint of the chain. The checkpoint's
// signature is checked first and reported whatever else fails: a valid
// signature on a forged bundle authenticates who signed, not the claim.
func Verify(b Bundle, opts VerifyOptions) Report {
	c := b.Certificate
	rep := Report{TaskBoundaryID: c.TaskBoundaryID.String(), EvidenceChainHead: c.EvidenceChainHead, Checkpoint: CheckpointAbsent}
	var signed *checkpoint.Signed
	var cpErr error
	if b.Checkpoint != nil {
		s, err := checkpoint.Open(b.Checkpoint, opts.Keys)
		switch {
		case err != nil:
			cpErr = err
			rep.Checkpoint = CheckpointRefused + err.Error()
		case s.Authenticated():
			signed = &s
			key := s.Key
			rep.Authenticated, rep.Checkpoint, rep.SignedBy = true, CheckpointAuthenticated, &key
		default:
			signed = &s
			rep.Checkpoint = CheckpointUnauthenticated
		}
		if signed != nil {
			size, head := signed.Size, signed.Head
			rep.CheckpointSize, rep.CheckpointHead = &size, &head
		}
	}
	fail := func(err error) Report {
		var ce *governance.CertificateError
		if !errors.As(err, &ce) {
			ce = &governance.CertificateError{Rule: governance.RuleCertificate, Reason: err.Error()}
		}
		rule := ce.Rule
		rep.Valid, rep.Rule = false, &rule
		if ce.Code != "" {
			code := ce.Code
			rep.FailureCode = &code
		}
		if ce.RecordID != "" {
			id := ce.RecordID
			rep.FailedRecordID = &id
		}
		reason := ce.Reason
		rep.Reason = &reason
		return rep
	}
	boundary, err := boundaryOf(c, b.Records)
	if err != nil {
		return fail(err)
	}
	chain := boundary.ChainID.String()
	rep.ChainID = &chain
	ev := Evidence{Boundary: boundary, Records: b.Records, ExpectedHead: c.EvidenceChainHead, Policy: b.Policy}
	if b.policyProblem != "" {
		return fail(refuse(governance.RulePolicy, governance.MissingPolicy, "", "policy document: "+b.policyProblem))
	}
	out, err := Check(ev)
	if err != nil {
		return fail(err)
	}
	rep.CheckedRecords, rep.ProcessGrade = out.Checked, out.Grade
	switch {
	case c.PolicyID != boundary.PolicyID || c.PolicyVersion != boundary.PolicyVersion:
		return fail(refuse(governance.RuleCertificate, "", "", "the certificate names another policy version than its task"))
	case c.GateSummary != out.Summary:
		return fail(refuse(governance.RuleGateSummary, "", "", fmt.Sprintf("the certificate's gate summary %+v differs from the one recounted from GATE_EVALUATED records %+v", c.GateSummary, out.Summary)))
	case c.ProcessGrade != out.Grade:
		return fail(refuse(governance.RuleGrade, "", "", fmt.Sprintf("the certificate says %s, the evidence gives %s", c.ProcessGrade, out.Grade)))
	case c.MintedAt.Before(boundary.ClosedAt):
		return fail(refuse(governance.RuleCertificate, "", "", "the certificate was minted before its task closed"))
	}
	if err := checkCheckpoints(&rep, b, signed, cpErr, boundary.ChainID, opts); err != nil {
		return fail(err)
	}
	rep.Valid = true
	return rep
}

// boundaryOf finds the certificate's TASK_CLOSED and reads the boundary it
// closed from it.
func boundaryOf(c governance.TaskCertificate, recs []governance.EvidenceRecord) (governance.ClosedTaskBoundary, error) {
	for _, r := range recs {
		if r.RecordType != governance.TaskClosed {
			continue
		}
		p, err := parsePayload(r.PayloadJSON)
		if err != nil {
			continue
		}
		if id, _ := p.str("task_boundary_id"); id != c.TaskBoundaryID.String() {
			continue
		}
		opened, ok1 := p.time("opened_at")
		closed, ok2 := p.time("closed_at")
		if !ok1 || !ok2 {
			return governance.ClosedTaskBoundary{}, refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "TASK_CLOSED records no valid opened_at and closed_at")
		}
		return governance.ClosedTaskBoundary{
			TaskBoundaryID: c.TaskBoundaryID, ChainID: r.ChainID, PolicyID: c.PolicyID, PolicyVersion: c.PolicyVersion,
			OpenedAt: opened, ClosedAt: closed,
		}, nil
	}
	return governance.ClosedTaskBoundary{}, refuse(governance.RuleTaskClosed, "", "", "no TASK_CLOSED of task "+c.TaskBoundaryID.String()+" in the chain: the boundary is open or the chain is another task's")
}

// checkCheckpoints checks the bundle's checkpoint (read by Verify) and
// the later ones.
func checkCheckpoints(rep *Report, b Bundle, signed *checkpoint.Signed, cpErr error, chain uuid.UUID, opts VerifyOptions) error {
	size := int64(len(b.Records))
	bad := func(reason string) error { return refuse(governance.RuleCheckpoint, "", "", reason) }
	switch {
	case cpErr != nil:
		return bad(cpErr.Error())
	case signed == nil && len(opts.Keys) > 0:
		return bad("a verifier key was given but the bundle has no checkpoint to authenticate")
	case signed != nil:
		want := checkpoint.For(chain, size, b.Certificate.EvidenceChainHead)
		if signed.Checkpoint != want {
			return bad(fmt.Sprintf("the checkpoint commits to %s size %d head %s, the bundle holds %s size %d head %s", signed.Origin, signed.Size, signed.Head, want.Origin, want.Size, want.Head))
		}
	}
	for i, n := range opts.Later {
		s, err := checkpoint.Open(n, opts.Keys)
		if errors.Is(err, checkpoint.ErrUnknownKey) {
			continue // another log's or another key's: it vouches for nothing here
		}
		if err != nil {
			return bad(fmt.Sprintf("later checkpoint %d: %v", i+1, err))
		}
		if s.Origin != checkpoint.Origin(chain) {
			continue
		}
		rep.LaterCheckpoints++
		switch {
		case s.Size > size:
			return bad(fmt.Sprintf("a later checkpoint commits to %d records of this chain, the bundle holds %d: the chain was truncated", s.Size, size))
		case b.Records[s.Size-1].ChainHash != s.Head:
			return bad(fmt.Sprintf("a later checkpoint commits to head %s at size %d, the bundle's chain has %s there: the chain was rolled back or forked", s.Head, s.Size, b.Records[s.Size-1].ChainHash))
		}
	}
	return nil
}
