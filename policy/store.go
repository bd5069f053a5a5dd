package policy

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Store keeps every policy version ever put and the bindings that route
// operations to active ones (ADR-0087 D5's PolicySnapshotStore). The rules
// are in the package doc; policy/storetest checks them. Every method is
// safe for concurrent use. Snapshots and bindings are frozen values, so
// nothing returned is shared with the store.
type Store interface {
	// Put stores a staged snapshot after recomputing its digest (see the
	// package doc for idempotence and conflicts). An invalid or active
	// snapshot is a *governance.ValidationError. On error nothing is stored.
	Put(ctx context.Context, s governance.PolicySnapshot) error

	// Get returns the exact version, staged or active. A missing version is
	// a *governance.PolicyNotFoundError; a durable store reports a stored
	// snapshot that no longer matches its digest as an *IntegrityError and
	// never returns it.
	Get(ctx context.Context, policyID uuid.UUID, version string) (governance.PolicySnapshot, error)

	// Activate turns a staged version active at `at` (normalized to UTC
	// microseconds) by actor (optional) after activation's checks, and
	// returns the active projection. See the package doc.
	Activate(ctx context.Context, policyID uuid.UUID, version string, actor *governance.ActorRef, at time.Time) (governance.PolicySnapshot, error)

	// Bind stores a binding to an existing, active version. A scope and
	// selector already bound to another version is refused with an
	// *AmbiguousBindError (nothing stored): unbind that version first.
	Bind(ctx context.Context, b governance.PolicyBinding) error

	// Unbind removes the bindings of u's version at u's scope and selector
	// and returns how many it removed (0 is no error: unbinding twice is
	// harmless). Snapshots stay; only the routing changes.
	Unbind(ctx context.Context, u Unbinding) (int, error)

	// Bindings returns every stored binding, by scope, selector and id.
	Bindings(ctx context.Context) ([]governance.PolicyBinding, error)

	// Resolve returns the active snapshot routed to by the labels; "" means
	// the label is not supplied. See the package doc for precedence.
	Resolve(ctx context.Context, role, resource string) (governance.PolicySnapshot, error)
}

// Availability answers activation's question "can this gate run here?".
// The host implements it (registered adapters, loadable modules); tests
// use AvailabilityFuncs. Methods may be called concurrently.
type Availability interface {
	// AdapterAvailable reports whether an adapter with this id is registered.
	AdapterAvailable(adapterID string) bool
	// ModuleAvailable reports whether the module with this sha256 can be
	// loaded.
	ModuleAvailable(digest string) bool
}

// AvailabilityFuncs adapts two functions to Availability. A nil function
// reports nothing available.
type AvailabilityFuncs struct {
	Adapter func(adapterID string) bool
	Module  func(digest string) bool
}

// AdapterAvailable calls f.Adapter.
func (f AvailabilityFuncs) AdapterAvailable(adapterID string) bool {
	return f.Adapter != nil && f.Adapter(adapterID)
}

// ModuleAvailable calls f.Module.
func (f AvailabilityFuncs) ModuleAvailable(digest string) bool {
	return f.Module != nil && f.Module(digest)
}
