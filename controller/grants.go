package controller

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Exception grants and break-glass (ADR-0087 D8). A grant is recorded on
// the task chain (EXCEPTION_GRANTED, durable) before the operation it
// excuses is evaluated, so no excuse exists that the evidence does not
// show; every grant makes the task's certificate DEGRADED. A grant is
// actor-, gate-, tool- and policy-version-specific, time-bounded (explicit
// expiry, no default), consumed by the first deny it excuses, and refused
// when two grants could excuse the same deny (ambiguity denies).
//
// An ordinary grant excuses a soft deny. A break-glass grant also excuses a
// hard deny. Neither excuses what is not a gate's verdict: a policy that
// cannot be loaded or does not match its digest, a tool with no binding,
// or evidence that cannot be written deny before or without any gate, and
// an advisory deny never blocks.

// GrantException records an attributable exception for one soft gate on
// one task chain. It must be recorded before the operation it excuses is
// evaluated; it is consumed by the first soft deny it matches.
func (c *InvocationController) GrantException(ctx context.Context, chain uuid.UUID, g governance.ExceptionGrant) (governance.ExceptionGrant, error) {
	g.BreakGlass = false
	return c.recordGrant(ctx, chain, g)
}

// BreakGlass records a break-glass grant: like GrantException, but it also
// excuses a hard deny of its gate. Its reason code and expiry are required
// (there is no default duration). The certificate of the task is DEGRADED.
func (c *InvocationController) BreakGlass(ctx context.Context, chain uuid.UUID, g governance.ExceptionGrant) (governance.ExceptionGrant, error) {
	g.BreakGlass = true
	return c.recordGrant(ctx, chain, g)
}

func (c *InvocationController) recordGrant(ctx context.Context, chain uuid.UUID, g governance.ExceptionGrant) (governance.ExceptionGrant, error) {
	g, err := governance.NewExceptionGrant(g)
	if err != nil {
		return governance.ExceptionGrant{}, err
	}
	if g.UsedAt != nil {
		return governance.ExceptionGrant{}, &governance.ValidationError{Field: "used_at", Reason: "a new grant is unused"}
	}
	payload := map[string]any{
		"grant_id": g.GrantID, "actor_kind": g.Actor.Kind, "actor_id": g.Actor.ID, "gate_id": g.GateID,
		"tool_id": g.ToolID, "reason_code": g.ReasonCode, "issued_at": g.IssuedAt, "expires_at": g.ExpiresAt,
		"max_uses": g.MaxUses, "break_glass": g.BreakGlass,
	}
	if g.IssuedBy != nil {
		payload["issued_by_kind"], payload["issued_by_id"] = g.IssuedBy.Kind, g.IssuedBy.ID
	}
	if _, err := c.appendRecords(ctx, chain, g.PolicyID, g.PolicyVersion, nil, nil, recordSpec{typ: governance.ExceptionGranted, payload: payload}); err != nil {
		return governance.ExceptionGrant{}, &governance.GovernanceEvidenceError{CallExecuted: false, Err: err}
	}
	c.exceptions.add(chain, g)
	return g, nil
}

// exceptionBook holds recorded, unused grants per chain.
type exceptionBook struct {
	mu     sync.Mutex
	grants map[uuid.UUID][]governance.ExceptionGrant
}

func (b *exceptionBook) add(chain uuid.UUID, g governance.ExceptionGrant) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grants == nil {
		b.grants = map[uuid.UUID][]governance.ExceptionGrant{}
	}
	b.grants[chain] = append(b.grants[chain], g)
}

// grantOutcome is what consume found for one deny.
type grantOutcome int

const (
	noGrant grantOutcome = iota
	grantUsed
	grantAmbiguous
)

// consume marks and returns the one grant that excuses a deny at level,
// if exactly one matches: issued to the operation's actor for this gate,
// tool and policy version, unexpired and unused; for a hard deny only a
// break-glass grant. Two matching grants are ambiguous and excuse nothing.
func (b *exceptionBook) consume(chain uuid.UUID, level governance.GateLevel, actor *governance.ActorRef, gateID, toolID string, policyID uuid.UUID, version string, now time.Time) (governance.ExceptionGrant, grantOutcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	gs := b.grants[chain]
	found := -1
	for i, g := range gs {
		if level == governance.LevelHard && !g.BreakGlass {
			continue
		}
		if g.Matches(actor, gateID, toolID, policyID, version, now) {
			if found >= 0 {
				return governance.ExceptionGrant{}, grantAmbiguous
			}
			found = i
		}
	}
	if found < 0 {
		return governance.ExceptionGrant{}, noGrant
	}
	g := gs[found]
	used := now.UTC().Truncate(time.Microsecond)
	g.UsedAt = &used
	b.grants[chain] = append(gs[:found:found], gs[found+1:]...)
	return g, grantUsed
}
