package pgstore

import (
	"context"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgdb"
	"github.com/govhost/govhost/policy"
)

var _ policy.Lister = (*Store)(nil)

// List implements policy.Lister: every row, each checked as Get checks it.
func (s *Store) List(ctx context.Context) ([]governance.PolicySnapshot, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	rows, err := s.pool.Query(ctx, `SELECT policy_id::text, version, snapshot FROM policy_snapshots`)
	if err != nil {
		return nil, pgdb.Wrap("list policies", err)
	}
	defer rows.Close()
	var out []governance.PolicySnapshot
	for rows.Next() {
		var idText, version string
		var raw []byte
		if err := rows.Scan(&idText, &version, &raw); err != nil {
			return nil, pgdb.Wrap("list policies", err)
		}
		id, err := uuid.Parse(idText)
		if err != nil {
			return nil, pgdb.Wrap("list policies", err)
		}
		snap, err := s.verified.Decode(snapshotKey(id, version), id, version, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, snap)
	}
	if err := rows.Err(); err != nil {
		return nil, pgdb.Wrap("list policies", err)
	}
	policy.SortSnapshots(out)
	return out, nil
}
