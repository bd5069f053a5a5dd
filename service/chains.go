package service

import (
	"context"
	"io"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// ExportChain writes a chain as JSON Lines (what chain verify reads).
func (s *Service) ExportChain(ctx context.Context, chain uuid.UUID, w io.Writer) error {
	recs, err := s.eng.Evidence.Read(ctx, chain, -1)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return failf(CodeChainNotFound, "no records for chain %s", chain)
	}
	return evidence.WriteJSONL(w, recs)
}

// ChainHead is a chain's last record: its sequence and chain hash.
type ChainHead struct {
	ChainID  uuid.UUID
	Sequence int64
	Hash     string
}

// ChainHead returns a chain's head; a chain without records is
// CodeChainNotFound.
func (s *Service) ChainHead(ctx context.Context, chain uuid.UUID) (ChainHead, error) {
	h, err := s.eng.Evidence.Head(ctx, chain)
	if err != nil {
		return ChainHead{}, err
	}
	if h == governance.EmptyHead {
		return ChainHead{}, failf(CodeChainNotFound, "no records for chain %s", chain)
	}
	return ChainHead{ChainID: chain, Sequence: h.Sequence, Hash: h.Hash}, nil
}

// VerifyChain verifies a stored chain against a head the caller trusts.
func (s *Service) VerifyChain(ctx context.Context, chain uuid.UUID, expectedHead string) (governance.VerificationResult, error) {
	if !governance.IsDigest(expectedHead) {
		return governance.VerificationResult{}, failf(CodeInvalidRequest, "expected_head must be 64 lowercase hex characters")
	}
	return s.eng.Evidence.Verify(ctx, chain, expectedHead)
}
