package pebblestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
)

var _ evidence.ChainLister = (*Store)(nil)

// Chains implements evidence.ChainLister with one seek a chain: record keys
// sort by chain id.
func (s *Store) Chains(ctx context.Context, after uuid.UUID, limit int) ([]uuid.UUID, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.closeMu.RUnlock()
	out := []uuid.UUID{}
	if limit <= 0 {
		return out, nil
	}
	// A chain is the range of its record keys: list the first key of each
	// range, then seek past it.
	prefix := []byte{'e', '/', tagRecord}
	lower := prefix
	if after != uuid.Nil {
		lower = prefixEnd(chainPrefix(after))
	}
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: list chains: %w: %w", ErrIO, err)
	}
	for ok := it.First(); ok && len(out) < limit; ok = it.SeekGE(prefixEnd(chainPrefix(out[len(out)-1]))) {
		k := it.Key()
		if len(k) != keyLenRecord {
			_ = it.Close()
			return nil, fmt.Errorf("%w: record key %x", ErrCorrupt, k)
		}
		out = append(out, uuid.UUID(k[3:19]))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblestore: list chains: %w: %w", ErrIO, err)
	}
	return out, nil
}
