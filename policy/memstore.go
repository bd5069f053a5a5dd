package policy

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/internal/resolve"
)

// MemStore is the in-memory reference Store: every rule, no durability.
// It is safe for concurrent use.
type MemStore struct {
	avail Availability

	mu        sync.RWMutex
	snapshots map[resolve.Ref]governance.PolicySnapshot
	bindings  map[uuid.UUID]governance.PolicyBinding
	byLabel   map[label][]governance.PolicyBinding
}

type label struct {
	scope    governance.PolicyScope
	selector string
}

var _ Store = (*MemStore)(nil)

// NewMemStore returns an empty store whose Activate asks avail. A nil
// avail reports every adapter and module unavailable.
func NewMemStore(avail Availability) *MemStore {
	return &MemStore{
		avail:     avail,
		snapshots: make(map[resolve.Ref]governance.PolicySnapshot),
		bindings:  make(map[uuid.UUID]governance.PolicyBinding),
		byLabel:   make(map[label][]governance.PolicyBinding),
	}
}

// Put implements Store.
func (m *MemStore) Put(ctx context.Context, s governance.PolicySnapshot) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckPut(s); err != nil {
		return err
	}
	ref := resolve.Ref{PolicyID: s.PolicyID(), Version: s.Version()}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.snapshots[ref]; ok {
		return CheckRePut(old, s)
	}
	m.snapshots[ref] = s
	return nil
}

// Get implements Store.
func (m *MemStore) Get(ctx context.Context, policyID uuid.UUID, version string) (governance.PolicySnapshot, error) {
	if err := ctx.Err(); err != nil {
		return governance.PolicySnapshot{}, err
	}
	m.mu.RLock()
	s, ok := m.snapshots[resolve.Ref{PolicyID: policyID, Version: version}]
	m.mu.RUnlock()
	if !ok {
		return governance.PolicySnapshot{}, notFound(policyID, version)
	}
	return s, nil
}

func notFound(policyID uuid.UUID, version string) error {
	return &governance.PolicyNotFoundError{PolicyID: policyID.String(), Version: version}
}

// Activate implements Store.
func (m *MemStore) Activate(ctx context.Context, policyID uuid.UUID, version string, actor *governance.ActorRef, at time.Time) (governance.PolicySnapshot, error) {
	if err := ctx.Err(); err != nil {
		return governance.PolicySnapshot{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ref := resolve.Ref{PolicyID: policyID, Version: version}
	s, ok := m.snapshots[ref]
	if !ok {
		return governance.PolicySnapshot{}, notFound(policyID, version)
	}
	active, err := ActivateSnapshot(s, m.avail, actor, at)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	m.snapshots[ref] = active
	return active, nil
}

// Bind implements Store.
func (m *MemStore) Bind(ctx context.Context, b governance.PolicyBinding) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.bindings[b.BindingID]; ok {
		return CheckReBind(old, b)
	}
	s, ok := m.snapshots[resolve.Ref{PolicyID: b.PolicyID, Version: b.PolicyVersion}]
	if err := CheckBindTarget(b, s, ok); err != nil {
		return err
	}
	l := label{b.Scope, b.Selector}
	if err := CheckBindLabel(b, m.byLabel[l]); err != nil {
		return err
	}
	m.bindings[b.BindingID] = b
	m.byLabel[l] = append(m.byLabel[l], b)
	return nil
}

// Unbind implements Store.
func (m *MemStore) Unbind(ctx context.Context, u Unbinding) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := u.Validate(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := label{u.Scope, u.Selector}
	var kept []governance.PolicyBinding
	removed := 0
	for _, b := range m.byLabel[l] {
		if u.Matches(b) {
			delete(m.bindings, b.BindingID)
			removed++
			continue
		}
		kept = append(kept, b)
	}
	m.byLabel[l] = kept
	return removed, nil
}

// Bindings implements Store.
func (m *MemStore) Bindings(ctx context.Context) ([]governance.PolicyBinding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	out := make([]governance.PolicyBinding, 0, len(m.bindings))
	for _, b := range m.bindings {
		out = append(out, b)
	}
	m.mu.RUnlock()
	SortBindings(out)
	return out, nil
}

// Resolve implements Store.
func (m *MemStore) Resolve(ctx context.Context, role, resource string) (governance.PolicySnapshot, error) {
	if err := ctx.Err(); err != nil {
		return governance.PolicySnapshot{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	ref, err := resolve.Resolve(ctx, role, resource, func(_ context.Context, scope governance.PolicyScope, selector string) ([]governance.PolicyBinding, error) {
		return m.byLabel[label{scope, selector}], nil
	})
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	s, ok := m.snapshots[ref]
	if !ok {
		return governance.PolicySnapshot{}, notFound(ref.PolicyID, ref.Version)
	}
	return s, nil
}
