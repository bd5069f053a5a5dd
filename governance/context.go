package governance

import (
	"time"

	"github.com/google/uuid"
)

// ActorRef names who acts. A supplied actor reference is policy input, not
// proof of identity (ADR-0087: authentication is out of scope).
type ActorRef struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// Validate requires both parts.
func (a ActorRef) Validate() error {
	if a.Kind == "" {
		return &ValidationError{Field: "actor.kind", Reason: "is required"}
	}
	if a.ID == "" {
		return &ValidationError{Field: "actor.id", Reason: "is required"}
	}
	return nil
}

// OperationContext pins one governed operation: its ids, its task and chain,
// who acts, and the exact policy version and digest that decide it
// (ADR-0087 D5). It is explicit and authoritative; copy it, never share a
// mutable one.
type OperationContext struct {
	OperationID       uuid.UUID     `json:"operation_id"`
	ChainID           uuid.UUID     `json:"chain_id"`
	TaskBoundaryID    uuid.UUID     `json:"task_boundary_id"`
	SessionID         uuid.NullUUID `json:"session_id"`
	BranchID          uuid.NullUUID `json:"branch_id"`
	Actor             *ActorRef     `json:"actor"`
	ParentOperationID uuid.NullUUID `json:"parent_operation_id"`
	ToolID            string        `json:"tool_id"`
	PolicyID          uuid.UUID     `json:"policy_id"`
	PolicyVersion     string        `json:"policy_version"`
	PolicyDigest      string        `json:"policy_digest"`
	StartedAt         time.Time     `json:"started_at"`
}

// NewOperationContext validates c and returns a copy with its time
// normalized to UTC microseconds and its actor copied.
func NewOperationContext(c OperationContext) (OperationContext, error) {
	if err := c.Validate(); err != nil {
		return OperationContext{}, err
	}
	if c.Actor != nil {
		a := *c.Actor
		c.Actor = &a
	}
	c.StartedAt, _ = NormalizeTime("started_at", c.StartedAt) // NB: checked by Validate
	return c, nil
}

// Validate is NewOperationContext's checks, with its errors, without
// making the copy: a governed call checks the caller's context once and
// keeps its own copy of the fields it uses.
func (c OperationContext) Validate() error {
	switch {
	case c.OperationID == uuid.Nil:
		return &ValidationError{Field: "operation_id", Reason: "is required"}
	case c.ChainID == uuid.Nil:
		return &ValidationError{Field: "chain_id", Reason: "is required"}
	case c.TaskBoundaryID == uuid.Nil:
		return &ValidationError{Field: "task_boundary_id", Reason: "is required"}
	case c.ToolID == "":
		return &ValidationError{Field: "tool_id", Reason: "is required"}
	case c.PolicyID == uuid.Nil:
		return &ValidationError{Field: "policy_id", Reason: "is required"}
	case c.PolicyVersion == "":
		return &ValidationError{Field: "policy_version", Reason: "is required"}
	}
	if err := checkDigest("policy_digest", c.PolicyDigest); err != nil {
		return err
	}
	if c.Actor != nil {
		if err := c.Actor.Validate(); err != nil {
			return err
		}
	}
	_, err := NormalizeTime("started_at", c.StartedAt)
	return err
}

// Child returns the context of an operation started by c: a new operation
// id, chain and tool, the same task and policy pin, and c as its parent.
func (c OperationContext) Child(operationID, chainID uuid.UUID, toolID string) (OperationContext, error) {
	child := c
	child.OperationID = operationID
	child.ChainID = chainID
	child.ToolID = toolID
	child.ParentOperationID = uuid.NullUUID{UUID: c.OperationID, Valid: true}
	return NewOperationContext(child)
}

// ActorValue returns the actor, copied, and whether one is set.
func (c OperationContext) ActorValue() (ActorRef, bool) {
	if c.Actor == nil {
		return ActorRef{}, false
	}
	return *c.Actor, true
}
