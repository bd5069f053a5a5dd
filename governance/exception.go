package governance

import (
	"time"

	"github.com/google/uuid"
)

// ExceptionGrant is an attributable, time-bounded, single-use exception to
// one soft gate for one tool under one exact policy version (ADR-0087 D8).
// There is no default duration: the issuer chooses and records the bound.
type ExceptionGrant struct {
	GrantID       uuid.UUID  `json:"grant_id"`
	Actor         ActorRef   `json:"actor"`
	GateID        string     `json:"gate_id"`
	ToolID        string     `json:"tool_id"`
	PolicyID      uuid.UUID  `json:"policy_id"`
	PolicyVersion string     `json:"policy_version"`
	ReasonCode    string     `json:"reason_code"`
	IssuedAt      time.Time  `json:"issued_at"`
	ExpiresAt     time.Time  `json:"expires_at"`
	MaxUses       int        `json:"max_uses"`
	UsedAt        *time.Time `json:"used_at"`
	// BreakGlass marks a break-glass grant, which also excuses a hard deny
	// (controller.BreakGlass); ReasonCode and ExpiresAt are required as for
	// every grant.
	BreakGlass bool `json:"break_glass"`
	// IssuedBy is who issued the grant ("operator", "console:<session>"),
	// recorded with it; optional for grants made in process.
	IssuedBy *ActorRef `json:"issued_by,omitempty"`
}

// NewExceptionGrant validates g: an attributable actor, every id, an
// expiry strictly after issue, max_uses 1 (0 means 1).
func NewExceptionGrant(g ExceptionGrant) (ExceptionGrant, error) {
	if g.GrantID == uuid.Nil {
		g.GrantID = uuid.New()
	}
	if err := g.Actor.Validate(); err != nil {
		return ExceptionGrant{}, err
	}
	switch {
	case g.GateID == "":
		return ExceptionGrant{}, &ValidationError{Field: "gate_id", Reason: "is required"}
	case g.ToolID == "":
		return ExceptionGrant{}, &ValidationError{Field: "tool_id", Reason: "is required"}
	case g.PolicyID == uuid.Nil:
		return ExceptionGrant{}, &ValidationError{Field: "policy_id", Reason: "is required"}
	case g.PolicyVersion == "":
		return ExceptionGrant{}, &ValidationError{Field: "policy_version", Reason: "is required"}
	case g.ReasonCode == "":
		return ExceptionGrant{}, &ValidationError{Field: "reason_code", Reason: "is required"}
	}
	if g.IssuedBy != nil {
		if err := g.IssuedBy.Validate(); err != nil {
			return ExceptionGrant{}, &ValidationError{Field: "issued_by", Reason: err.Error()}
		}
	}
	if g.MaxUses == 0 {
		g.MaxUses = 1
	}
	if g.MaxUses != 1 {
		return ExceptionGrant{}, &ValidationError{Field: "max_uses", Reason: "must be 1"}
	}
	var err error
	if g.IssuedAt, err = NormalizeTime("issued_at", g.IssuedAt); err != nil {
		return ExceptionGrant{}, err
	}
	if g.ExpiresAt, err = NormalizeTime("expires_at", g.ExpiresAt); err != nil {
		return ExceptionGrant{}, err
	}
	if !g.ExpiresAt.After(g.IssuedAt) {
		return ExceptionGrant{}, &ValidationError{Field: "expires_at", Reason: "must be later than issued_at"}
	}
	if g.UsedAt != nil {
		u, err := NormalizeTime("used_at", *g.UsedAt)
		if err != nil {
			return ExceptionGrant{}, err
		}
		g.UsedAt = &u
	}
	return g, nil
}

// Matches reports whether g may excuse a soft deny by gate for tool, asked
// by actor under the policy version at time now: a grant is actor-, tool-,
// gate- and policy-version-specific (ADR-0087 D8), unused, issued at or
// before now and not expired. An operation without an actor matches no
// grant.
func (g ExceptionGrant) Matches(actor *ActorRef, gateID, toolID string, policyID uuid.UUID, version string, now time.Time) bool {
	return actor != nil && *actor == g.Actor &&
		g.UsedAt == nil && g.GateID == gateID && g.ToolID == toolID &&
		g.PolicyID == policyID && g.PolicyVersion == version &&
		!now.Before(g.IssuedAt) && now.Before(g.ExpiresAt)
}
