package policy

// The rules of the package doc as functions, so that every Store
// implementation (memory, Pebble, later SQL) applies them identically.

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// CheckPut returns the error Put gives s before looking at the store: s
// must be a valid (digest recomputed) staged snapshot.
func CheckPut(s governance.PolicySnapshot) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.ReleaseState() != governance.Staged {
		return &governance.ValidationError{Field: "release_state", Reason: "Put accepts staged snapshots only; Activate is the only staged → active transition"}
	}
	return nil
}

// CheckActivation applies activation's checks to s, in evaluation order:
// each binding's tool ids form a nonempty set, its gate id and order are
// unique in the snapshot, and its adapter and module are available. A nil
// avail makes every adapter and module unavailable (fail closed). It
// returns the first failure as an *ActivationError, or nil.
func CheckActivation(s governance.PolicySnapshot, avail Availability) error {
	refuse := func(i int, field, reason string) error {
		return &ActivationError{
			PolicyID: s.PolicyID().String(), Version: s.Version(),
			Field: "gate_bindings[" + strconv.Itoa(i) + "]." + field, Reason: reason,
		}
	}
	modules := modulesAvailable(s, avail)
	gateAt := make(map[string]int, s.NumGateBindings())
	orderAt := make(map[int]int, s.NumGateBindings())
	for i := 0; i < s.NumGateBindings(); i++ {
		b := s.GateBinding(i)
		tools := b.ToolIDs()
		if len(tools) == 0 {
			return refuse(i, "tool_ids", "must be a nonempty set")
		}
		seen := make(map[string]bool, len(tools))
		for j, id := range tools {
			if seen[id] {
				return refuse(i, "tool_ids["+strconv.Itoa(j)+"]", fmt.Sprintf("duplicate tool id %q", id))
			}
			seen[id] = true
		}
		if j, dup := gateAt[b.GateID()]; dup {
			return refuse(i, "gate_id", fmt.Sprintf("duplicate gate id %q (also gate_bindings[%d])", b.GateID(), j))
		}
		gateAt[b.GateID()] = i
		if j, dup := orderAt[b.Order()]; dup {
			return refuse(i, "order", fmt.Sprintf("duplicate order %d (also gate_bindings[%d])", b.Order(), j))
		}
		orderAt[b.Order()] = i
		if avail == nil {
			return refuse(i, "adapter_id", fmt.Sprintf("adapter %q is not available (the store has no availability check)", b.AdapterID()))
		}
		if !avail.AdapterAvailable(b.AdapterID()) {
			return refuse(i, "adapter_id", fmt.Sprintf("adapter %q is not available", b.AdapterID()))
		}
		if !modules[b.ModuleDigest()] {
			return refuse(i, "module_digest", fmt.Sprintf("module %s is not available", b.ModuleDigest()))
		}
	}
	return nil
}

// modulesAvailable asks avail about every module of s at once, one
// goroutine per distinct digest: loading a module (decoding, validating,
// compiling or reading it from the compilation cache) is the slow part of
// activation, and the modules are independent. A nil avail has none.
func modulesAvailable(s governance.PolicySnapshot, avail Availability) map[string]bool {
	found := make(map[string]bool, s.NumGateBindings())
	if avail == nil {
		return found
	}
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	asked := make(map[string]bool, s.NumGateBindings())
	for i := 0; i < s.NumGateBindings(); i++ {
		digest := s.GateBinding(i).ModuleDigest()
		if asked[digest] {
			continue
		}
		asked[digest] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok := avail.ModuleAvailable(digest)
			mu.Lock()
			found[digest] = ok
			mu.Unlock()
		}()
	}
	wg.Wait()
	return found
}

// CheckRePut is Put's answer when (policy_id, version) is already stored as
// stored: nil when the digests match (idempotent), otherwise a
// *governance.PolicyConflictError.
func CheckRePut(stored, proposed governance.PolicySnapshot) error {
	if stored.Digest() == proposed.Digest() {
		return nil
	}
	return &governance.PolicyConflictError{
		PolicyID: proposed.PolicyID().String(), Version: proposed.Version(),
		StoredDigest: stored.Digest(), ProposedDigest: proposed.Digest(),
	}
}

// ActivateSnapshot is Activate's decision for the stored snapshot s: s itself
// when already active (idempotent), otherwise the active projection after
// CheckActivation. at and actor are validated first, in every case.
func ActivateSnapshot(s governance.PolicySnapshot, avail Availability, actor *governance.ActorRef, at time.Time) (governance.PolicySnapshot, error) {
	if _, err := governance.NormalizeTime("activated_at", at); err != nil {
		return governance.PolicySnapshot{}, err
	}
	if actor != nil {
		if err := actor.Validate(); err != nil {
			return governance.PolicySnapshot{}, &governance.ValidationError{Field: "activated_by", Reason: err.Error()}
		}
	}
	if s.IsActive() {
		return s, nil
	}
	if err := CheckActivation(s, avail); err != nil {
		return governance.PolicySnapshot{}, err
	}
	return s.Activated(at, actor)
}

// CheckReBind is Bind's answer when b.BindingID is already stored as stored:
// nil when equal, otherwise a *BindingConflictError.
func CheckReBind(stored, b governance.PolicyBinding) error {
	if stored == b {
		return nil
	}
	return &BindingConflictError{BindingID: b.BindingID.String()}
}

// CheckBindTarget refuses a binding whose target version is missing
// (found false: *governance.PolicyNotFoundError) or staged
// (*NotActiveError).
func CheckBindTarget(b governance.PolicyBinding, target governance.PolicySnapshot, found bool) error {
	if !found {
		return notFound(b.PolicyID, b.PolicyVersion)
	}
	if !target.IsActive() {
		return &NotActiveError{PolicyID: b.PolicyID.String(), Version: b.PolicyVersion, Field: "policy_version"}
	}
	return nil
}

// CheckBindLabel refuses b when the bindings already stored at its scope and
// selector route to another version (*AmbiguousBindError). Stores call it
// under the same lock or transaction as the write.
func CheckBindLabel(b governance.PolicyBinding, existing []governance.PolicyBinding) error {
	requested := b.PolicyID.String() + "@" + b.PolicyVersion
	seen := map[string]bool{}
	var bound []string
	for _, e := range existing {
		ref := e.PolicyID.String() + "@" + e.PolicyVersion
		if ref != requested && !seen[ref] {
			seen[ref] = true
			bound = append(bound, ref)
		}
	}
	if len(bound) == 0 {
		return nil
	}
	sort.Strings(bound)
	return &AmbiguousBindError{Scope: string(b.Scope), Selector: b.Selector, Bound: bound, Requested: requested}
}

// Unbinding names the bindings Unbind removes: those of one policy version
// at one scope and selector ("" for global).
type Unbinding struct {
	PolicyID uuid.UUID
	Version  string
	Scope    governance.PolicyScope
	Selector string
}

// Matches reports whether b is one of u's bindings.
func (u Unbinding) Matches(b governance.PolicyBinding) bool {
	return b.PolicyID == u.PolicyID && b.PolicyVersion == u.Version && b.Scope == u.Scope && b.Selector == u.Selector
}

// Validate checks u names a scope the way a binding does.
func (u Unbinding) Validate() error {
	probe := governance.PolicyBinding{BindingID: uuid.New(), Scope: u.Scope, Selector: u.Selector, PolicyID: u.PolicyID, PolicyVersion: u.Version, CreatedAt: time.Unix(0, 0).UTC()}
	return probe.Validate()
}

// SortBindings orders bindings as Store.Bindings returns them: by scope,
// selector, then binding id.
func SortBindings(bs []governance.PolicyBinding) {
	sort.Slice(bs, func(i, j int) bool {
		a, b := bs[i], bs[j]
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		if a.Selector != b.Selector {
			return a.Selector < b.Selector
		}
		return a.BindingID.String() < b.BindingID.String()
	})
}
