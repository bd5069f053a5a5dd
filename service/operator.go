package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// ListPolicies returns every stored version, staged and active, ordered by
// policy id, then version.
func (s *Service) ListPolicies(ctx context.Context) ([]PolicySummary, error) {
	lister, ok := s.eng.Policies.(policy.Lister)
	if !ok {
		return nil, fmt.Errorf("service: the policy store (%T) cannot list its versions", s.eng.Policies)
	}
	snaps, err := lister.List(ctx)
	if err != nil {
		return nil, policyError(err)
	}
	out := make([]PolicySummary, len(snaps))
	for i, snap := range snaps {
		out[i] = SummaryOf(snap)
	}
	return out, nil
}

// PolicyVersions returns the stored versions of one policy; a policy with
// none is CodePolicyNotFound.
func (s *Service) PolicyVersions(ctx context.Context, id uuid.UUID) ([]PolicySummary, error) {
	all, err := s.ListPolicies(ctx)
	if err != nil {
		return nil, err
	}
	var out []PolicySummary
	for _, p := range all {
		if p.PolicyID == id {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, failf(CodePolicyNotFound, "no version of policy %s is stored", id)
	}
	return out, nil
}

// Bundle is a closed task's certificate and its proof (certify's bundle).
type Bundle = certify.Bundle

// Bundle mints a closed task's certificate at its chain's head and
// gathers its proof (govhost.Engine.Bundle): the certificate, the chain
// up to the certified head and the policy snapshot; without
// withCheckpoint the signed checkpoint is left out.
func (s *Service) Bundle(ctx context.Context, task uuid.UUID, withCheckpoint bool) (Bundle, error) {
	b, err := s.eng.Bundle(ctx, task)
	var ce *governance.CertificateError
	switch {
	case errors.Is(err, govhost.ErrNoTask):
		return certify.Bundle{}, failf(CodeTaskNotFound, "no closed task %s in this data directory (unknown, or still open: close it first)", task)
	case errors.As(err, &ce):
		return certify.Bundle{}, fail(CodeNotMintable, err)
	case err != nil:
		return certify.Bundle{}, err
	}
	if !withCheckpoint {
		b.Checkpoint = nil
	}
	return b, nil
}

// BundleTar writes the bundle folder of a closed task as a tar archive
// (certify.WriteTar). A refusal comes before any byte is written.
func (s *Service) BundleTar(ctx context.Context, task uuid.UUID, withCheckpoint bool, w io.Writer) error {
	b, err := s.Bundle(ctx, task, withCheckpoint)
	if err != nil {
		return err
	}
	return certify.WriteTar(w, b)
}

// SignCheckpoint signs a chain's current head with the data directory's
// key (a C2SP signed note); a chain without records is CodeChainNotFound.
func (s *Service) SignCheckpoint(ctx context.Context, chain uuid.UUID) ([]byte, error) {
	h, err := s.eng.Evidence.Head(ctx, chain)
	if err != nil {
		return nil, err
	}
	if h.IsEmpty() {
		return nil, failf(CodeChainNotFound, "no records for chain %s", chain)
	}
	return s.eng.SignCheckpoint(ctx, chain)
}

// ExceptionRequest asks for a single-use excuse of one gate's deny of one
// tool in an open task (ADR-0087 D8).
type ExceptionRequest struct {
	GateID, ToolID, ReasonCode string
	ExpiresAt                  time.Time
	// Actor is whom the grant excuses; nil means the task's actor.
	Actor *governance.ActorRef
	// IssuedBy is who issues it; recorded with the grant.
	IssuedBy governance.ActorRef
	// BreakGlass also excuses a hard deny.
	BreakGlass bool
}

// GrantException records an exception (or break-glass) grant on an open
// task's chain, pinned to the task's policy version. The task's
// certificate will be DEGRADED.
func (s *Service) GrantException(ctx context.Context, task uuid.UUID, req ExceptionRequest) (governance.ExceptionGrant, error) {
	t, err := s.task(task)
	if err != nil {
		return governance.ExceptionGrant{}, err
	}
	actor := req.Actor
	if actor == nil {
		actor = t.Actor()
	}
	if actor == nil {
		return governance.ExceptionGrant{}, failf(CodeInvalidRequest, "actor is required: task %s was opened without one, and a grant excuses one actor", task)
	}
	issuer := req.IssuedBy
	pin := t.Pin()
	g := governance.ExceptionGrant{
		Actor: *actor, GateID: req.GateID, ToolID: req.ToolID, PolicyID: pin.PolicyID, PolicyVersion: pin.Version,
		ReasonCode: req.ReasonCode, IssuedAt: time.Now(), ExpiresAt: req.ExpiresAt, IssuedBy: &issuer,
	}
	grant := s.ctl.GrantException
	if req.BreakGlass {
		grant = s.ctl.BreakGlass
	}
	out, err := grant(ctx, t.ChainID(), g)
	var ve *governance.ValidationError
	var ee *governance.GovernanceEvidenceError
	switch {
	case errors.As(err, &ve):
		return governance.ExceptionGrant{}, fail(CodeInvalidRequest, err)
	case errors.As(err, &ee):
		return governance.ExceptionGrant{}, evidenceFailure(err)
	case err != nil:
		return governance.ExceptionGrant{}, err
	}
	return out, nil
}
