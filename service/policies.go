package service

import (
	"context"
	"errors"
	"fmt"
	"github.com/govhost/govhost/api"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy/policyfile"
	"github.com/govhost/govhost/policy/profiles"
)

type PolicySummary = api.PolicySummary

// SummaryOf summarises a snapshot.
func SummaryOf(s governance.PolicySnapshot) PolicySummary {
	return PolicySummary{PolicyID: s.PolicyID(), Version: s.Version(), Digest: s.Digest(), ReleaseState: string(s.ReleaseState()), GateCount: s.NumGateBindings()}
}

// apiResolver resolves a policy file's module references sent over the
// API: a built-in gate's name, or the sha256 of a module already here. A
// path on the server's disk is refused: a client names code by digest.
func (s *Service) apiResolver(ref string) (string, error) {
	if policyfile.IsPath(ref) {
		return "", fmt.Errorf("%w: %q: module paths are not accepted over the API; reference a built-in gate by name or a stored module by its sha256", policyfile.ErrModuleNotFound, ref)
	}
	if m, ok := builtin.Lookup(ref); ok {
		return m.Digest, nil
	}
	if governance.IsDigest(ref) && s.eng.Gates.ModuleAvailable(ref) {
		return ref, nil
	}
	return "", fmt.Errorf("%w: no built-in gate and no stored module %q (have %v)", policyfile.ErrModuleNotFound, ref, builtin.Names())
}

// PutPolicy stores a policy file's version, staged. Storing the same
// version with the same digest again is not an error.
func (s *Service) PutPolicy(ctx context.Context, file []byte) (PolicySummary, error) {
	snap, err := policyfile.Load(file, "request body", s.apiResolver)
	if errors.Is(err, policyfile.ErrModuleNotFound) {
		return PolicySummary{}, fail(CodeModuleNotFound, err)
	}
	if err != nil {
		return PolicySummary{}, fail(CodePolicyInvalid, err)
	}
	if err := s.eng.Policies.Put(ctx, snap); err != nil {
		return PolicySummary{}, policyError(err)
	}
	stored, err := s.eng.Policies.Get(ctx, snap.PolicyID(), snap.Version())
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
	b, err := governance.NewPolicyBinding(governance.PolicyBinding{
		BindingID: uuid.New(), Scope: scope, Selector: selector, PolicyID: id, PolicyVersion: version, CreatedAt: time.Now(),
	})
	if err != nil {
		return governance.PolicyBinding{}, fail(CodeInvalidRequest, err)
	}
	if err := s.eng.Policies.Bind(ctx, b); err != nil {
		return governance.PolicyBinding{}, policyError(err)
	}
	return b, nil
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
	data, err := os.ReadFile(file)
	if err != nil {
		return PolicySummary{}, false, err
	}
	snap, err := policyfile.Load(data, file, s.eng.Gates.Resolver(filepath.Dir(file)))
	if err != nil {
		return PolicySummary{}, false, err
	}
	if err := s.eng.Policies.Put(ctx, snap); err != nil {
		return PolicySummary{}, false, err
	}
	if snap, err = s.eng.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), actor, time.Now()); err != nil {
		return PolicySummary{}, false, err
	}
	if current, err := s.eng.Policies.Resolve(ctx, "", ""); err == nil && current.PolicyID() == snap.PolicyID() && current.Version() == snap.Version() {
		return SummaryOf(snap), false, nil
	}
	if _, err := s.BindPolicy(ctx, snap.PolicyID(), snap.Version(), governance.ScopeGlobal, ""); err != nil {
		return PolicySummary{}, false, err
	}
	return SummaryOf(snap), true, nil
}

// WarmUp loads and configures every gate of a policy version, so the
// first governed call does not pay for it.
func (s *Service) WarmUp(ctx context.Context, p PolicySummary) error {
	snap, err := s.eng.Policies.Get(ctx, p.PolicyID, p.Version)
	if err != nil {
		return err
	}
	for _, b := range snap.GateBindings() {
		if _, err := s.eng.Gates.GateFor(ctx, b); err != nil {
			return fmt.Errorf("gate %s: %w", b.GateID(), err)
		}
	}
	return nil
}
