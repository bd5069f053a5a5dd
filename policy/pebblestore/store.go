package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/internal/resolve"
)

// Put implements policy.Store.
func (s *Store) Put(ctx context.Context, snap governance.PolicySnapshot) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := policy.CheckPut(snap); err != nil {
		return err
	}
	value, err := snap.MarshalJSON()
	if err != nil {
		return fmt.Errorf("pebblestore: encode %s: %w", snap.Ref(), err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	stored, found, err := s.read(snap.PolicyID(), snap.Version())
	if err != nil {
		return err
	}
	if found {
		return policy.CheckRePut(stored, snap)
	}
	if err := s.db.Set(snapshotKey(snap.PolicyID(), snap.Version()), value, pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: put %s: %w", snap.Ref(), err)
	}
	return nil
}

// read returns the stored snapshot, checked (see policy.SnapshotCache),
// and whether it exists.
func (s *Store) read(policyID uuid.UUID, version string) (governance.PolicySnapshot, bool, error) {
	key := snapshotKey(policyID, version)
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return governance.PolicySnapshot{}, false, nil
	}
	if err != nil {
		return governance.PolicySnapshot{}, false, fmt.Errorf("pebblestore: read %s@%s: %w", policyID, version, err)
	}
	defer closer.Close()
	snap, err := s.verified.Decode(string(key), policyID, version, v)
	if err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	return snap, true, nil
}

// Get implements policy.Store.
func (s *Store) Get(ctx context.Context, policyID uuid.UUID, version string) (governance.PolicySnapshot, error) {
	if err := ctx.Err(); err != nil {
		return governance.PolicySnapshot{}, err
	}
	snap, found, err := s.read(policyID, version)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	if !found {
		return governance.PolicySnapshot{}, &governance.PolicyNotFoundError{PolicyID: policyID.String(), Version: version}
	}
	return snap, nil
}

// Activate implements policy.Store.
func (s *Store) Activate(ctx context.Context, policyID uuid.UUID, version string, actor *governance.ActorRef, at time.Time) (governance.PolicySnapshot, error) {
	if err := ctx.Err(); err != nil {
		return governance.PolicySnapshot{}, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	stored, err := s.Get(ctx, policyID, version)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	active, err := policy.ActivateSnapshot(stored, s.avail, actor, at)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	if stored.IsActive() {
		return stored, nil
	}
	value, err := active.MarshalJSON()
	if err != nil {
		return governance.PolicySnapshot{}, fmt.Errorf("pebblestore: encode %s: %w", active.Ref(), err)
	}
	if err := s.db.Set(snapshotKey(policyID, version), value, pebble.Sync); err != nil {
		return governance.PolicySnapshot{}, fmt.Errorf("pebblestore: activate %s: %w", active.Ref(), err)
	}
	return active, nil
}

// Bind implements policy.Store.
func (s *Store) Bind(ctx context.Context, b governance.PolicyBinding) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.Validate(); err != nil {
		return err
	}
	value, err := b.MarshalJSON()
	if err != nil {
		return fmt.Errorf("pebblestore: encode binding %s: %w", b.BindingID, err)
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	key := bindingKey(b.BindingID)
	v, err := get(s.db, key)
	switch {
	case err == nil:
		stored, err := policy.DecodeBinding(string(key), v)
		if err != nil {
			return err
		}
		return policy.CheckReBind(stored, b)
	case !errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("pebblestore: read binding %s: %w", b.BindingID, err)
	}
	target, found, err := s.read(b.PolicyID, b.PolicyVersion)
	if err != nil {
		return err
	}
	if err := policy.CheckBindTarget(b, target, found); err != nil {
		return err
	}
	existing, err := s.bindingsAt(b.Scope, b.Selector)
	if err != nil {
		return err
	}
	if err := policy.CheckBindLabel(b, existing); err != nil {
		return err
	}
	batch := s.db.NewBatch()
	defer batch.Close()
	if err := batch.Set(key, value, nil); err != nil {
		return err
	}
	if err := batch.Set(labelKey(b), value, nil); err != nil {
		return err
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: bind %s: %w", b.BindingID, err)
	}
	return nil
}

// Resolve implements policy.Store.
func (s *Store) Resolve(ctx context.Context, role, resource string) (governance.PolicySnapshot, error) {
	if err := ctx.Err(); err != nil {
		return governance.PolicySnapshot{}, err
	}
	// One iterator, re-bounded per scope: cheaper than one per scope.
	var iter *pebble.Iterator
	defer func() {
		if iter != nil {
			_ = iter.Close()
		}
	}()
	lookup := func(_ context.Context, scope governance.PolicyScope, selector string) ([]governance.PolicyBinding, error) {
		prefix := labelPrefix(scope, selector)
		if iter == nil {
			var err error
			if iter, err = s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)}); err != nil {
				return nil, fmt.Errorf("pebblestore: scan bindings: %w", err)
			}
		} else {
			iter.SetBounds(prefix, prefixEnd(prefix))
		}
		return scanBindings(iter, prefix, scope, selector)
	}
	ref, err := resolve.Resolve(ctx, role, resource, lookup)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	snap, err := s.Get(ctx, ref.PolicyID, ref.Version)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	if !snap.IsActive() {
		return governance.PolicySnapshot{}, policy.NotActiveBound(string(snapshotKey(ref.PolicyID, ref.Version)), snap)
	}
	return snap, nil
}

// scanBindings decodes the bindings iter holds under prefix, checking each
// sits under its own key.
func scanBindings(iter *pebble.Iterator, prefix []byte, scope governance.PolicyScope, selector string) ([]governance.PolicyBinding, error) {
	var out []governance.PolicyBinding
	for iter.First(); iter.Valid(); iter.Next() {
		key := iter.Key()
		b, err := policy.DecodeBinding(string(key), iter.Value())
		if err == nil && (len(key) != len(prefix)+36 || string(key[len(prefix):]) != b.BindingID.String() ||
			b.Scope != scope || b.Selector != selector) {
			err = &policy.IntegrityError{Key: string(key), Field: "binding_id", Reason: "binding stored under another binding's key"}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if err := iter.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: scan bindings: %w", err)
	}
	return out, nil
}

// bindingsAt returns the bindings stored at (scope, selector).
func (s *Store) bindingsAt(scope governance.PolicyScope, selector string) ([]governance.PolicyBinding, error) {
	prefix := labelPrefix(scope, selector)
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: scan bindings: %w", err)
	}
	defer iter.Close()
	return scanBindings(iter, prefix, scope, selector)
}

// Unbind implements policy.Store: the binding and its label index entry go
// in one synced batch.
func (s *Store) Unbind(ctx context.Context, u policy.Unbinding) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := u.Validate(); err != nil {
		return 0, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	existing, err := s.bindingsAt(u.Scope, u.Selector)
	if err != nil {
		return 0, err
	}
	batch := s.db.NewBatch()
	defer batch.Close()
	removed := 0
	for _, b := range existing {
		if !u.Matches(b) {
			continue
		}
		if err := errors.Join(batch.Delete(bindingKey(b.BindingID), nil), batch.Delete(labelKey(b), nil)); err != nil {
			return 0, err
		}
		removed++
	}
	if removed == 0 {
		return 0, nil
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		return 0, fmt.Errorf("pebblestore: unbind: %w", err)
	}
	return removed, nil
}

// Bindings implements policy.Store.
func (s *Store) Bindings(ctx context.Context) ([]governance.PolicyBinding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	prefix := []byte(KeyPrefix + "b/")
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: scan bindings: %w", err)
	}
	defer iter.Close()
	var out []governance.PolicyBinding
	for iter.First(); iter.Valid(); iter.Next() {
		b, err := policy.DecodeBinding(string(iter.Key()), iter.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if err := iter.Error(); err != nil {
		return nil, fmt.Errorf("pebblestore: scan bindings: %w", err)
	}
	policy.SortBindings(out)
	return out, nil
}
