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

// Chains implements evidence.ChainLister by scanning the head keys, which
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
	prefix := []byte{'e', '/', tagHead}
	lower := putHeadKey(nil, after)
	if after == uuid.Nil {
		lower = prefix
	}
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: list chains: %w: %w", ErrIO, err)
	}
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		k := it.Key()
		if len(k) != keyLenHead {
			_ = it.Close()
			return nil, fmt.Errorf("%w: head key %x", ErrCorrupt, k)
		}
		id := uuid.UUID(k[3:])
		if id == after && after != uuid.Nil {
			continue
		}
		out = append(out, id)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("pebblestore: list chains: %w: %w", ErrIO, err)
	}
	return out, nil
}
