package govhost

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy/profiles"
)

// DefaultPolicyFile returns the default coding-agent policy of a profile
// (profiles.Balanced when empty) as this data directory installs it: the
// profile's file with the data directory filled in.
func (e *Engine) DefaultPolicyFile(profile string) ([]byte, error) {
	return profiles.Render(profile, e.dir)
}

// EnsureDefaultPolicy makes sure a policy governs: when no global policy
// resolves, it stores, activates (as actor) and binds globally the default
// coding-agent policy of profile. It returns what resolves globally
// afterwards and whether it installed it. A data directory that already
// resolves a policy is left as it is, whatever the profile.
func (e *Engine) EnsureDefaultPolicy(ctx context.Context, profile string, actor *governance.ActorRef) (governance.PolicySnapshot, bool, error) {
	current, err := e.Policies.Resolve(ctx, "", "")
	var nf *governance.PolicyNotFoundError
	if err == nil || !errors.As(err, &nf) {
		return current, false, err
	}
	data, err := e.DefaultPolicyFile(profile)
	if err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	file, err := ParsePolicyFile(data, "default policy ("+profile+")", "")
	if err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	snap, _, err := e.PutPolicyFile(ctx, file)
	if err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	if snap, err = e.Policies.Activate(ctx, snap.PolicyID(), snap.Version(), actor, time.Now()); err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	b, err := governance.NewPolicyBinding(governance.PolicyBinding{
		BindingID: uuid.New(), Scope: governance.ScopeGlobal, PolicyID: snap.PolicyID(), PolicyVersion: snap.Version(), CreatedAt: time.Now(),
	})
	if err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	if err := e.Policies.Bind(ctx, b); err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	return snap, true, nil
}
