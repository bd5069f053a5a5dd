package controller

import (
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Decided is one authorization's verdict as a live view sees it: who
// asked, for what, and the answer. It carries no argument values.
type Decided struct {
	At             time.Time
	TaskBoundaryID uuid.UUID
	ChainID        uuid.UUID
	OperationID    uuid.UUID
	Tool           string
	Operation      string
	AgentName      string
	RunID          string
	ToolCallID     string
	// ArgumentDigest is the sha256 of the final arguments (empty when the
	// arguments were not a JSON object).
	ArgumentDigest string
	Allowed        bool
	// GateID, ReasonCode and Message explain a deny.
	GateID     string
	ReasonCode string
	Message    string
	// Failure is set when no verdict was reached (evidence could not be
	// written, the task closed): the call did not run.
	Failure string
}

func decidedOf(op *operation, err error) Decided {
	d := Decided{
		At: op.c.now().UTC(), TaskBoundaryID: op.ctx.TaskBoundaryID, ChainID: op.ctx.ChainID, OperationID: op.ctx.OperationID,
		Tool: op.call.Tool, Operation: op.call.Operation, AgentName: op.call.AgentName, RunID: op.call.RunID,
		ToolCallID: op.call.ToolCallID, ArgumentDigest: op.args.Digest, Allowed: err == nil,
	}
	var de *governance.GovernanceDeniedError
	switch {
	case err == nil:
	case errors.As(err, &de):
		d.GateID, d.ReasonCode, d.Message = de.GateID, de.ReasonCode, de.Message
	default:
		d.Failure = err.Error()
	}
	return d
}
