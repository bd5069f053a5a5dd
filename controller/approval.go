package controller

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// ApprovalRequest is what an approver sees when a gate answers
// require_approval. Arguments are shown to the approver, never recorded.
type ApprovalRequest struct {
	// ID is assigned by a broker ("tool-approval-N"); empty otherwise.
	ID          string
	OperationID uuid.UUID
	Tool        string
	Operation   string
	Action      string
	GateID      string
	ReasonCode  string
	// Message is the gate's model-facing text (AgentLane's approval text).
	Message    string
	Actor      *governance.ActorRef
	RunID      string
	AgentName  string
	ToolCallID string
	Metadata   map[string]string
	Arguments  json.RawMessage
	// ArgumentDigest is the sha256 of Arguments: an approver's answer can
	// be bound to exactly these arguments.
	ArgumentDigest string
	// MatchedRule is the rule of the gate that asked, when it names one.
	MatchedRule string
	// Cwd and PathFacts are the host's resolution of the call's paths the
	// gate decided on.
	Cwd       string
	PathFacts []abi.PathFact
}

// ApprovalDecision answers an approval request. Only DecisionAllow
// approves; anything else (deny, require_approval again, an unknown value)
// denies. Approver and DecidedAt are recorded in evidence. The text the
// agent then sees is AgentLane's: Reason when set; else, for
// require_approval (the original decision, e.g. a host timeout), the
// gate's approval-required text; else the gate's deny text for the request
// (abi.GateOutput.DenyMessage, or "permission denied: <tool> is not
// allowed").
type ApprovalDecision struct {
	Decision  abi.Decision
	Approver  *governance.ActorRef
	DecidedAt time.Time
	// Reason, when not blank, is the model-facing text of a decision that
	// does not allow, verbatim (AgentLane: "when a decision carries a
	// reason, that reason is the text"). Shown to the agent, never
	// recorded in evidence.
	Reason string
	// Arguments, with an allow, replaces the call's arguments (a JSON
	// object): ADR-0086's "a dict replaces the arguments". Every check gate
	// then runs again on them; the gate that asked is not asked again for
	// exactly these arguments.
	Arguments json.RawMessage
}

// ApprovalCallback decides an approval request. It may block until a human
// answers; ctx carries the call's deadline. An error denies.
type ApprovalCallback func(ctx context.Context, req ApprovalRequest) (ApprovalDecision, error)
