package evidence

import (
	"bytes"
	"context"
	"sort"

	"github.com/google/uuid"
)

var _ ChainLister = (*MemStore)(nil)

// Chains implements ChainLister.
func (s *MemStore) Chains(ctx context.Context, after uuid.UUID, limit int) ([]uuid.UUID, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// NB: collect under s.mu, check records after: appends take a chain's
	// lock before s.mu.
	s.mu.Lock()
	candidates := make(map[uuid.UUID]*memChain, len(s.chains))
	for id, c := range s.chains {
		if bytes.Compare(id[:], after[:]) > 0 {
			candidates[id] = c
		}
	}
	s.mu.Unlock()
	ids := make([]uuid.UUID, 0, len(candidates))
	for id, c := range candidates {
		if c.hasRecords() {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	if limit < 0 {
		limit = 0
	}
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids, nil
}

// hasRecords reports whether the chain holds a record: a refused genesis
// append creates the chain's entry but no chain.
func (c *memChain) hasRecords() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.recs) > 0
}
