package service

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Certificate is a minted certificate and the chain it certifies.
type Certificate struct {
	ChainID     uuid.UUID
	Certificate governance.TaskCertificate
}

// Mint certifies the closed task whose evidence is chain: the chain must
// end with its TASK_CLOSED. expectedHead is the head the caller trusts
// (from closing the task); empty trusts the stored head. Every refusal
// by the issuer is CodeNotMintable with the issuer's reason.
func (s *Service) Mint(ctx context.Context, chain uuid.UUID, expectedHead string) (Certificate, error) {
	if expectedHead != "" && !governance.IsDigest(expectedHead) {
		return Certificate{}, failf(CodeInvalidRequest, "expected_head must be 64 lowercase hex characters")
	}
	recs, err := s.eng.Evidence.Read(ctx, chain, -1)
	if err != nil {
		return Certificate{}, err
	}
	if len(recs) == 0 {
		return Certificate{}, failf(CodeChainNotFound, "no records for chain %s", chain)
	}
	last := recs[len(recs)-1]
	if expectedHead == "" {
		expectedHead = last.ChainHash
	}
	b, err := boundaryOf(last)
	if err != nil {
		return Certificate{}, err
	}
	cert, err := s.issuer.Mint(ctx, b, expectedHead)
	var ce *governance.CertificateError
	if errors.As(err, &ce) {
		return Certificate{}, fail(CodeNotMintable, err)
	}
	if err != nil {
		return Certificate{}, err
	}
	out := Certificate{ChainID: chain, Certificate: cert}
	s.certs.put(out)
	return out, nil
}

// boundaryOf rebuilds a closed boundary from its TASK_CLOSED record, so
// a task can be certified from its evidence alone (also after a restart).
func boundaryOf(r governance.EvidenceRecord) (governance.ClosedTaskBoundary, error) {
	if r.RecordType != governance.TaskClosed {
		return governance.ClosedTaskBoundary{}, failf(CodeNotMintable, "the chain does not end with TASK_CLOSED: close the task first")
	}
	var p struct {
		TaskBoundaryID string `json:"task_boundary_id"`
		OpenedAt       string `json:"opened_at"`
		ClosedAt       string `json:"closed_at"`
	}
	if err := json.Unmarshal([]byte(r.PayloadJSON), &p); err != nil {
		return governance.ClosedTaskBoundary{}, fail(CodeNotMintable, err)
	}
	id, err := uuid.Parse(p.TaskBoundaryID)
	if err != nil {
		return governance.ClosedTaskBoundary{}, fail(CodeNotMintable, err)
	}
	opened, err := governance.ParseTime("opened_at", p.OpenedAt)
	if err != nil {
		return governance.ClosedTaskBoundary{}, fail(CodeNotMintable, err)
	}
	closed, err := governance.ParseTime("closed_at", p.ClosedAt)
	if err != nil {
		return governance.ClosedTaskBoundary{}, fail(CodeNotMintable, err)
	}
	b, err := governance.NewClosedTaskBoundary(governance.ClosedTaskBoundary{
		TaskBoundaryID: id, ChainID: r.ChainID, PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion,
		OpenedAt: opened, ClosedAt: closed,
	})
	if err != nil {
		return governance.ClosedTaskBoundary{}, fail(CodeNotMintable, err)
	}
	return b, nil
}

// CertificateByID returns a certificate minted by this process (the most
// recent MaxCertificates are kept; mint again for an older one).
func (s *Service) CertificateByID(id uuid.UUID) (Certificate, error) {
	if c, ok := s.certs.get(id); ok {
		return c, nil
	}
	return Certificate{}, failf(CodeCertNotFound, "certificate %s was not minted by this server since it started (or is among the oldest dropped); mint it again from its chain", id)
}

// certBook keeps the most recent certificates, oldest dropped first.
type certBook struct {
	mu    sync.Mutex
	max   int
	byID  map[uuid.UUID]Certificate
	order []uuid.UUID
}

func (b *certBook) put(c Certificate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byID == nil {
		b.byID = map[uuid.UUID]Certificate{}
	}
	b.byID[c.Certificate.CertificateID] = c
	b.order = append(b.order, c.Certificate.CertificateID)
	for len(b.order) > b.max {
		delete(b.byID, b.order[0])
		b.order = b.order[1:]
	}
}

// byChain returns the newest certificate kept for chain.
func (b *certBook) byChain(chain uuid.UUID) (Certificate, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := len(b.order) - 1; i >= 0; i-- {
		if c := b.byID[b.order[i]]; c.ChainID == chain {
			return c, true
		}
	}
	return Certificate{}, false
}

func (b *certBook) get(id uuid.UUID) (Certificate, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.byID[id]
	return c, ok
}
