package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgdb"
)

// Reads see committed appends only: an append's records become visible to
// every reader (on any server) when its one statement commits.

// Read implements evidence.Store. A stored record that does not decode is
// an error wrapping ErrCorrupt (Verify reports it as CONTENT_MISMATCH).
func (s *Store) Read(ctx context.Context, chainID uuid.UUID, afterSequence int64) ([]governance.EvidenceRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := []governance.EvidenceRecord{}
	if afterSequence == math.MaxInt64 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT sequence, record FROM evidence_records
		WHERE chain_id = $1 AND sequence > $2 ORDER BY sequence`, chainID, afterSequence)
	if err != nil {
		return nil, pgdb.Wrap("read chain "+chainID.String(), err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			seq int64
			raw string
		)
		if err := rows.Scan(&seq, &raw); err != nil {
			return nil, pgdb.Wrap("read chain "+chainID.String(), err)
		}
		var r governance.EvidenceRecord
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			return nil, fmt.Errorf("%w: chain %s sequence %d: %w", ErrCorrupt, chainID, seq, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, pgdb.Wrap("read chain "+chainID.String(), err)
	}
	return out, nil
}

// Head implements evidence.Store: one indexed row, no scan.
func (s *Store) Head(ctx context.Context, chainID uuid.UUID) (governance.ChainHead, error) {
	if err := s.enter(ctx); err != nil {
		return governance.EmptyHead, err
	}
	defer s.mu.RUnlock()
	return s.head(ctx, chainID)
}

func (s *Store) head(ctx context.Context, chainID uuid.UUID) (governance.ChainHead, error) {
	var h governance.ChainHead
	err := s.pool.QueryRow(ctx, `SELECT head_sequence, head_hash FROM evidence_chains WHERE chain_id = $1`, chainID).Scan(&h.Sequence, &h.Hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return governance.EmptyHead, nil
	}
	if err != nil {
		return governance.EmptyHead, pgdb.Wrap("read head of "+chainID.String(), err)
	}
	return h, nil
}

// Chains implements evidence.ChainLister.
func (s *Store) Chains(ctx context.Context, after uuid.UUID, limit int) ([]uuid.UUID, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if limit <= 0 {
		return []uuid.UUID{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT chain_id FROM evidence_chains WHERE chain_id > $1 ORDER BY chain_id LIMIT $2`, after, limit)
	if err != nil {
		return nil, pgdb.Wrap("list chains", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, pgdb.Wrap("list chains", err)
	}
	return ids, nil
}

// Verify implements evidence.Store. It reads one snapshot through a
// server-side cursor, Options.VerifyPage records at a time, feeding
// evidence.Verifier: memory stays bounded by one page whatever the chain's
// length, and appends committed meanwhile are not seen. A record that no
// longer decodes is CONTENT_MISMATCH naming its stored record id; a failed
// read is an error (matching governance.ErrStoreUnavailable when the
// database is), never a result.
func (s *Store) Verify(ctx context.Context, chainID uuid.UUID, expectedHead string) (governance.VerificationResult, error) {
	if err := s.enter(ctx); err != nil {
		return governance.VerificationResult{}, err
	}
	defer s.mu.RUnlock()
	var res governance.VerificationResult
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DECLARE verify_chain NO SCROLL CURSOR FOR
			SELECT record_id, record FROM evidence_records WHERE chain_id = $1 ORDER BY sequence`, chainID); err != nil {
			return err
		}
		v := evidence.NewVerifier()
		var (
			verified governance.ChainHead
			checked  int64
		)
		fetch := "FETCH FORWARD " + strconv.Itoa(s.opts.VerifyPage) + " FROM verify_chain"
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, fetch)
			if err != nil {
				return err
			}
			got, stop := 0, false
			for rows.Next() && !stop {
				got++
				var (
					id  uuid.UUID
					raw string
				)
				if err := rows.Scan(&id, &raw); err != nil {
					rows.Close()
					return err
				}
				var r governance.EvidenceRecord
				if err := json.Unmarshal([]byte(raw), &r); err != nil || r.ChainID != chainID {
					res = governance.VerificationResult{
						VerifiedHead: verified.Hash, CheckedRecords: checked,
						FailureCode: governance.ContentMismatch, FailedRecordID: uuid.NullUUID{UUID: id, Valid: true},
					}
					rows.Close()
					return nil
				}
				if !v.Add(r) {
					stop = true
					break
				}
				verified, checked = r.Head(), checked+1
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			if stop || got < s.opts.VerifyPage {
				res = v.Result(expectedHead)
				return nil
			}
		}
	})
	if err != nil {
		return governance.VerificationResult{}, pgdb.Wrap("verify chain "+chainID.String(), err)
	}
	return res, nil
}
