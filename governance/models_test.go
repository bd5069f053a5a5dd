package governance_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

func validContext(t *testing.T) governance.OperationContext {
	t.Helper()
	c, err := governance.NewOperationContext(governance.OperationContext{
		OperationID: uuid.New(), ChainID: uuid.New(), TaskBoundaryID: uuid.New(),
		Actor: &governance.ActorRef{Kind: "user", ID: "ada"}, ToolID: "bash",
		PolicyID: uuid.New(), PolicyVersion: "v1", PolicyDigest: governance.SHA256Hex(nil),
		StartedAt: time.Date(2026, 1, 1, 1, 0, 0, 123456789, time.FixedZone("X", 7200)),
	})
	require.NoError(t, err)
	return c
}

func TestOperationContext_NewNormalizesAndCopies(t *testing.T) {
	actor := &governance.ActorRef{Kind: "user", ID: "ada"}
	c, err := governance.NewOperationContext(governance.OperationContext{
		OperationID: uuid.New(), ChainID: uuid.New(), TaskBoundaryID: uuid.New(), Actor: actor, ToolID: "bash",
		PolicyID: uuid.New(), PolicyVersion: "v1", PolicyDigest: governance.SHA256Hex(nil),
		StartedAt: time.Date(2026, 1, 1, 1, 0, 0, 123456789, time.FixedZone("X", 7200)),
	})
	require.NoError(t, err)
	require.Equal(t, time.Date(2025, 12, 31, 23, 0, 0, 123456000, time.UTC), c.StartedAt)
	actor.ID = "mallory"
	got, ok := c.ActorValue()
	require.True(t, ok)
	require.Equal(t, "ada", got.ID)

	out, err := json.Marshal(c)
	require.NoError(t, err)
	var back governance.OperationContext
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, c, back)
}

func TestOperationContext_NewRefuses(t *testing.T) {
	base := validContext(t)
	cases := map[string]func(c *governance.OperationContext){
		"operation_id":  func(c *governance.OperationContext) { c.OperationID = uuid.Nil },
		"tool_id":       func(c *governance.OperationContext) { c.ToolID = "" },
		"policy_digest": func(c *governance.OperationContext) { c.PolicyDigest = "abc" },
		"started_at":    func(c *governance.OperationContext) { c.StartedAt = time.Time{} },
		"actor.id":      func(c *governance.OperationContext) { c.Actor = &governance.ActorRef{Kind: "user"} },
	}
	for field, mutate := range cases {
		t.Run(field, func(t *testing.T) {
			c := base
			mutate(&c)
			_, err := governance.NewOperationContext(c)
			var ve *governance.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, field, ve.Field)
		})
	}
}

func TestOperationContext_Child(t *testing.T) {
	parent := validContext(t)
	op, chain := uuid.New(), uuid.New()
	child, err := parent.Child(op, chain, "reader")
	require.NoError(t, err)
	require.Equal(t, op, child.OperationID)
	require.Equal(t, chain, child.ChainID)
	require.Equal(t, "reader", child.ToolID)
	require.Equal(t, uuid.NullUUID{UUID: parent.OperationID, Valid: true}, child.ParentOperationID)
	require.Equal(t, parent.TaskBoundaryID, child.TaskBoundaryID)
	require.Equal(t, parent.PolicyDigest, child.PolicyDigest)
	require.Equal(t, parent.PolicyVersion, child.PolicyVersion)
	require.False(t, parent.ParentOperationID.Valid, "parent unchanged")
	_, err = parent.Child(uuid.Nil, chain, "reader")
	require.ErrorIs(t, err, governance.ErrInvalid)
}

func TestExceptionGrant_New(t *testing.T) {
	now := time.Now()
	g := governance.ExceptionGrant{
		Actor: governance.ActorRef{Kind: "user", ID: "oncall"}, GateID: "pathguard", ToolID: "write",
		PolicyID: uuid.New(), PolicyVersion: "v1", ReasonCode: "incident.1234",
		IssuedAt: now, ExpiresAt: now.Add(time.Minute),
	}
	ok, err := governance.NewExceptionGrant(g)
	require.NoError(t, err)
	require.Equal(t, 1, ok.MaxUses)
	oncall := &governance.ActorRef{Kind: "user", ID: "oncall"}
	require.True(t, ok.Matches(oncall, "pathguard", "write", g.PolicyID, "v1", now.Add(time.Second)))
	require.False(t, ok.Matches(&governance.ActorRef{Kind: "user", ID: "mallory"}, "pathguard", "write", g.PolicyID, "v1", now.Add(time.Second)), "other actor")
	require.False(t, ok.Matches(nil, "pathguard", "write", g.PolicyID, "v1", now.Add(time.Second)), "no actor")
	require.False(t, ok.Matches(oncall, "pathguard", "write", g.PolicyID, "v2", now.Add(time.Second)), "other version")
	require.False(t, ok.Matches(oncall, "pathguard", "read", g.PolicyID, "v1", now.Add(time.Second)), "other tool")
	require.False(t, ok.Matches(oncall, "pathguard", "write", g.PolicyID, "v1", now.Add(time.Minute)), "expired")

	bad := map[string]func(g *governance.ExceptionGrant){
		"expires_at": func(g *governance.ExceptionGrant) { g.ExpiresAt = g.IssuedAt },
		"actor.id":   func(g *governance.ExceptionGrant) { g.Actor.ID = "" },
		"max_uses":   func(g *governance.ExceptionGrant) { g.MaxUses = 2 },
		"issued_at":  func(g *governance.ExceptionGrant) { g.IssuedAt = time.Time{} },
	}
	for field, mutate := range bad {
		t.Run(field, func(t *testing.T) {
			c := g
			mutate(&c)
			_, err := governance.NewExceptionGrant(c)
			var ve *governance.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, field, ve.Field)
		})
	}
}

func TestClosedTaskBoundary_New(t *testing.T) {
	now := time.Now()
	b := governance.ClosedTaskBoundary{TaskBoundaryID: uuid.New(), ChainID: uuid.New(), PolicyID: uuid.New(), PolicyVersion: "v1", OpenedAt: now, ClosedAt: now}
	_, err := governance.NewClosedTaskBoundary(b)
	require.NoError(t, err)
	b.ClosedAt = now.Add(-time.Second)
	_, err = governance.NewClosedTaskBoundary(b)
	require.ErrorIs(t, err, governance.ErrInvalid)
}

func TestGateResult_New(t *testing.T) {
	detail := "why"
	r, err := governance.NewGateResult(governance.GateResult{
		GateID: "destructive", Level: governance.LevelHard, Decision: governance.Deny, ReasonCode: "destructive.rm_recursive_force",
		Detail: &detail, OperationID: uuid.New(), PolicyVersion: "v1", EvaluatedAt: time.Now(),
	})
	require.NoError(t, err)
	detail = "changed"
	require.Equal(t, "why", *r.Detail)
	require.NotEqual(t, uuid.Nil, r.ResultID)
	_, err = governance.NewGateResult(governance.GateResult{GateID: "g", Level: "hard", Decision: "require_approval", ReasonCode: "x", OperationID: uuid.New(), PolicyVersion: "v", EvaluatedAt: time.Now()})
	require.ErrorIs(t, err, governance.ErrInvalid)
	var lvl governance.GateLevel
	require.ErrorIs(t, json.Unmarshal([]byte(`"critical"`), &lvl), governance.ErrInvalid)
}
