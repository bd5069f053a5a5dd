package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/policyfile"
	"github.com/govhost/govhost/policy/profiles"
)

// PolicySummary names a stored policy version: id, version, digest,
// release state and how many gates it binds.
type PolicySummary struct {
	PolicyID     uuid.UUID
	Version      string
	Digest       string
	ReleaseState string
	GateCount    int
}

// Unbound is the answer of an unbind: how many bindings went (0 when the
// version was not bound there).
type Unbound struct {
	PolicyID uuid.UUID
	Version  string
	Scope    governance.PolicyScope
	Selector string
	Removed  int
}

// SummaryOf summarises a snapshot.
func SummaryOf(s governance.PolicySnapshot) PolicySummary {
	return PolicySummary{PolicyID: s.PolicyID(), Version: s.Version(), Digest: s.Digest(), ReleaseState: string(s.ReleaseState()), GateCount: s.NumGateBindings()}
}

// PutPolicy stores a policy file's version, staged (govhost's one
// store-a-policy-file operation). A file sent over the API names a module
// by a built-in gate's name or a stored module's sha256, never by a path.
// Storing the same version with the same digest again is not an error.
func (s *Service) PutPolicy(ctx context.Context, file []byte) (PolicySummary, error) {
	f, err := s.eng.Gates.ParseSentPolicyFile(file, "request body")
	if errors.Is(err, policyfile.ErrModuleNotFound) {
		return PolicySummary{}, fail(CodeModuleNotFound, err)
	}
	if err != nil {
		return PolicySummary{}, fail(CodePolicyInvalid, err)
	}
	stored, _, err := s.eng.PutPolicyFile(ctx, f)
	if err != nil {
		return PolicySummary{}, policyError(err)
	}
	return SummaryOf(stored), nil
}

// ActivatePolicy activates a staged version (its modules must load).
func (s *Service) ActivatePolicy(ctx context.Context, id uuid.UUID, version string, actor *governance.ActorRef) (PolicySummary, error) {
	if actor != nil {
		if err := actor.Validate(); err != nil {
			return PolicySummary{}, fail(CodeInvalidRequest, err)
		}
	}
	snap, err := s.eng.Policies.Activate(ctx, id, version, actor, time.Now())
	if err != nil {
		return PolicySummary{}, policyError(err)
	}
	return SummaryOf(snap), nil
}

// BindPolicy binds an active version to a scope: global, or a role or
// resource label.
func (s *Service) BindPolicy(ctx context.Context, id uuid.UUID, version string, scope governance.PolicyScope, selector string) (governance.PolicyBinding, error) {
	return s.BindPolicyBy(ctx, id, version, scope, selector, "")
}

// BindPolicyBy is BindPolicy logging who bound (by: "operator", ...). A
// scope already bound to another version is refused (bind_ambiguous, 409,
// naming both): unbind the earlier version first.
func (s *Service) BindPolicyBy(ctx context.Context, id uuid.UUID, version string, scope governance.PolicyScope, selector, by string) (governance.PolicyBinding, error) {
	b, err := governance.NewPolicyBinding(governance.PolicyBinding{
		BindingID: uuid.New(), Scope: scope, Selector: selector, PolicyID: id, PolicyVersion: version, CreatedAt: time.Now(),
	})
	if err != nil {
		return governance.PolicyBinding{}, fail(CodeInvalidRequest, err)
	}
	if err := s.eng.Policies.Bind(ctx, b); err != nil {
		return governance.PolicyBinding{}, policyError(err)
	}
	if by != "" {
		s.log.Info("policy bound", slog.String("policy", id.String()+"@"+version), slog.String("scope", string(scope)),
			slog.String("selector", selector), slog.String("by", by))
	}
	return b, nil
}

// UnbindPolicy removes a version's bindings at one scope and selector,
// logging who did it (by); removing none is not an error.
func (s *Service) UnbindPolicy(ctx context.Context, id uuid.UUID, version string, scope governance.PolicyScope, selector, by string) (Unbound, error) {
	u := policy.Unbinding{PolicyID: id, Version: version, Scope: scope, Selector: selector}
	if err := u.Validate(); err != nil {
		return Unbound{}, fail(CodeInvalidRequest, err)
	}
	n, err := s.eng.Policies.Unbind(ctx, u)
	if err != nil {
		return Unbound{}, policyError(err)
	}
	s.log.Info("policy unbound", slog.String("policy", id.String()+"@"+version), slog.String("scope", string(scope)),
		slog.String("selector", selector), slog.Int("removed", n), slog.String("by", by))
	return Unbound{PolicyID: id, Version: version, Scope: scope, Selector: selector, Removed: n}, nil
}

// Bindings lists the stored bindings; a scope (and selector) given keeps
// only those bound there.
func (s *Service) Bindings(ctx context.Context, scope, selector string) ([]governance.PolicyBinding, error) {
	all, err := s.eng.Policies.Bindings(ctx)
	if err != nil {
		return nil, policyError(err)
	}
	out := make([]governance.PolicyBinding, 0, len(all))
	for _, b := range all {
		if (scope == "" || string(b.Scope) == scope) && (selector == "" || b.Selector == selector) {
			out = append(out, b)
		}
	}
	return out, nil
}

// ResolvePolicy returns the version role / resource resolve to.
func (s *Service) ResolvePolicy(ctx context.Context, role, resource string) (PolicySummary, error) {
	snap, err := s.eng.Policies.Resolve(ctx, role, resource)
	if err != nil {
		return PolicySummary{}, policyError(err)
	}
	return SummaryOf(snap), nil
}

// ShowPolicy returns a stored snapshot.
func (s *Service) ShowPolicy(ctx context.Context, id uuid.UUID, version string) (governance.PolicySnapshot, error) {
	snap, err := s.eng.Policies.Get(ctx, id, version)
	if err != nil {
		return governance.PolicySnapshot{}, policyError(err)
	}
	return snap, nil
}

// DefaultPolicyID is the id of the default coding-agent policy serve
// installs on a first start (profiles.PolicyID; each profile is a version).
var DefaultPolicyID = profiles.PolicyID

// DefaultPolicyVersion is the version of the default profile (balanced),
// what a first start installs unless told otherwise.
var DefaultPolicyVersion = func() string {
	v, err := profiles.Version(profiles.Balanced)
	if err != nil {
		panic("service: the embedded balanced profile has no version: " + err.Error())
	}
	return v
}()

// EnsurePolicy makes sure something governs: with file set, that policy
// file (read on this machine; its .wasm paths are copied into the module
// folder) is stored, activated and bound globally; otherwise, when no
// global policy resolves, the default coding-agent policy of profile
// (profiles.Balanced when empty) is. It returns what resolves globally
// afterwards and whether it installed anything.
func (s *Service) EnsurePolicy(ctx context.Context, file, profile string) (PolicySummary, bool, error) {
	actor := &governance.ActorRef{Kind: "system", ID: "govhost-serve"}
	if file == "" {
		snap, installed, err := s.eng.EnsureDefaultPolicy(ctx, profile, actor)
		if err != nil {
			return PolicySummary{}, false, err
		}
		return SummaryOf(snap), installed, nil
	}
	f, err := govhost.ReadPolicyFile(file)
	if err != nil {
		return PolicySummary{}, false, err
	}
	snap, _, err := s.eng.PutPolicyFile(ctx, f)
	if err != nil {
		return PolicySummary{}, false, err
	}
	if snap, err = s.eng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), actor, time.Now()); err != nil {
		return PolicySummary{}, false, err
	}
	if current, err := s.eng.Policies.Resolve(ctx, "", ""); err == nil && current.PolicyID() == snap.PolicyID() && current.Version() == snap.Version() {
		return SummaryOf(snap), false, nil
	}
	// --policy FILE replaces whatever is bound globally, explicitly: the
	// operator named the policy that governs.
	bound, err := s.Bindings(ctx, string(governance.ScopeGlobal), "")
	if err != nil {
		return PolicySummary{}, false, err
	}
	for _, b := range bound {
		if b.PolicyID == snap.PolicyID() && b.PolicyVersion == snap.Version() {
			continue
		}
		if _, err := s.UnbindPolicy(ctx, b.PolicyID, b.PolicyVersion, governance.ScopeGlobal, "", "govhost serve --policy"); err != nil {
			return PolicySummary{}, false, err
		}
	}
	if _, err := s.BindPolicyBy(ctx, snap.PolicyID(), snap.Version(), governance.ScopeGlobal, "", "govhost serve"); err != nil {
		return PolicySummary{}, false, err
	}
	return SummaryOf(snap), true, nil
}

// UnresolvedError is a data directory whose global policy does not resolve
// or whose gates do not load (bindings made ambiguous before binds were
// checked, a module file removed): serve starts anyway, so that the
// operator can repair it through the API, and prints Repair.
type UnresolvedError struct {
	Err    error
	Repair string
}

func (e *UnresolvedError) Error() string { return e.Err.Error() + "; to repair: " + e.Repair }
func (e *UnresolvedError) Unwrap() error { return e.Err }

// Unresolved explains a failure of EnsurePolicy or WarmUp as an
// *UnresolvedError with the repair that fits it.
func (s *Service) Unresolved(ctx context.Context, err error) *UnresolvedError {
	repair := "list the bindings (GET /v1/bindings), unbind the version that should not govern " +
		"(POST /v1/policies/{policy_id}/versions/{version}/unbind with the operator token, or stop serve and run " +
		"`govhost policy unbind --id ID --version V --scope global`), and bind one that loads"
	var amb *governance.AmbiguousPolicyError
	if errors.As(err, &amb) {
		repair = fmt.Sprintf("%s is bound to %v; unbind all but one (POST /v1/policies/{policy_id}/versions/{version}/unbind "+
			"{\"scope\":%q} with the operator token, or stop serve and run `govhost policy unbind --id ID --version V --scope %s`)",
			amb.Scope, amb.Candidates, strings.ToLower(amb.Scope), strings.ToLower(amb.Scope))
	}
	return &UnresolvedError{Err: err, Repair: repair}
}

// WarmUp loads and configures every gate of a policy version, so the
// first governed call does not pay for it; the gates load side by side
// (govhost.Gates.Prepare, whose error names the first binding that failed).
func (s *Service) WarmUp(ctx context.Context, p PolicySummary) error {
	snap, err := s.eng.Policies.Get(ctx, p.PolicyID, p.Version)
	if err != nil {
		return err
	}
	return s.eng.Gates.Prepare(ctx, snap.GateBindings())
}
