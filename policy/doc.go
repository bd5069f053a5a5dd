// Package policy owns policy snapshot storage and its rules (ADR-0087 D5):
// the Store contract (Put, Get, Activate, Bind, Resolve), activation's
// checks, resolution precedence, and the in-memory reference store.
//
// The model types (governance.PolicySnapshot, ExecutableGateBinding,
// PolicyBinding) and their digest live in governance. The durable store is
// policy/pebblestore, the conformance suite every store passes is
// policy/storetest, and the human policy file format is policy/policyfile.
// This package does not run gates, hold module bytes or decide operations:
// it only answers which exact, immutable version applies.
//
// # Rules every Store enforces
//
//   - Put accepts staged snapshots only and recomputes the digest. Re-putting
//     the same (policy_id, version, digest) is a no-op, even after
//     activation; the same id and version with another digest is a
//     *governance.PolicyConflictError. Nothing is ever deleted.
//   - Activate is the only staged → active transition. It checks, in the
//     order the bindings are evaluated: nonempty distinct tool ids, unique
//     gate ids, unique orders, every adapter and module available (asked of
//     the injected Availability; nil means nothing is available). A refusal
//     is an *ActivationError naming the field. Activating an active version
//     again returns the stored active projection unchanged (its original
//     time and actor): activation is idempotent, never a second transition.
//   - Bind accepts valid bindings (GLOBAL with no selector, ROLE and
//     RESOURCE with one) to existing, active versions only: a missing
//     version is a *governance.PolicyNotFoundError, a staged one a
//     *NotActiveError. Re-binding the same binding id with the same content
//     is a no-op; with other content a *BindingConflictError.
//   - Resolve(role, resource) looks at resource bindings (if resource is
//     given), then role bindings (if role is given), then global ones, and
//     stops at the first scope with a candidate. More than one distinct
//     (policy_id, version) there is a *governance.AmbiguousPolicyError; no
//     candidate at all a *governance.PolicyNotFoundError. Labels route; they
//     do not authenticate.
//
// # Why Get returns an error for a missing version
//
// A missing version is, for every caller, a reason to deny (the controller
// denies, the certificate issuer reports MISSING_POLICY), and a durable
// store's Get can also fail on I/O or on a tampered record. One error path,
// matched with errors.As(err, new(*governance.PolicyNotFoundError)), keeps
// those callers fail-closed by construction.
package policy
