package policy

import (
	"context"
	"slices"
	"strings"

	"github.com/govhost/govhost/governance"
)

// Lister is the optional capability of a store that lists every version
// it keeps (GET /v1/policies, govhost policy list). Callers find it by type
// assertion; every store of this module implements it.
type Lister interface {
	// List returns every stored version, staged and active, ordered by
	// policy id, then version. A durable store refuses a snapshot that no
	// longer matches its digest (*IntegrityError) instead of listing it.
	List(ctx context.Context) ([]governance.PolicySnapshot, error)
}

// SortSnapshots orders snapshots as List returns them.
func SortSnapshots(s []governance.PolicySnapshot) {
	slices.SortFunc(s, func(a, b governance.PolicySnapshot) int {
		if c := strings.Compare(a.PolicyID().String(), b.PolicyID().String()); c != 0 {
			return c
		}
		return strings.Compare(a.Version(), b.Version())
	})
}

// List implements Lister.
func (m *MemStore) List(ctx context.Context) ([]governance.PolicySnapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	out := make([]governance.PolicySnapshot, 0, len(m.snapshots))
	for _, s := range m.snapshots {
		out = append(out, s)
	}
	m.mu.RUnlock()
	SortSnapshots(out)
	return out, nil
}

var _ Lister = (*MemStore)(nil)
