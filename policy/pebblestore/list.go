package pebblestore

import (
	"context"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

var _ policy.Lister = (*Store)(nil)

// List implements policy.Lister: every snapshot key, each checked as Get
// checks it.
func (s *Store) List(ctx context.Context) ([]governance.PolicySnapshot, error) {
	prefix := []byte(KeyPrefix + "s/")
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: list: %w", err)
	}
	defer it.Close()
	var out []governance.PolicySnapshot
	for it.First(); it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		key := string(it.Key())
		idText, version, ok := strings.Cut(strings.TrimPrefix(key, string(prefix)), "/")
		id, err := uuid.Parse(idText)
		if !ok || err != nil {
			return nil, fmt.Errorf("pebblestore: list: malformed snapshot key %q", key)
		}
		value, err := it.ValueAndErr()
		if err != nil {
			return nil, fmt.Errorf("pebblestore: list %s: %w", key, err)
		}
		snap, err := s.verified.Decode(key, id, version, value)
		if err != nil {
			return nil, err
		}
		out = append(out, snap)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: list: %w", err)
	}
	policy.SortSnapshots(out)
	return out, nil
}
