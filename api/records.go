package api

import (
	"time"

	"github.com/govhost/govhost/governance"
)

// PolicyList is the body of GET /v1/policies (every stored version) and
// GET /v1/policies/{policy_id} (the versions of one policy), ordered by
// policy id, then version.
type PolicyList struct {
	Policies []PolicySummary `json:"policies"`
}

// Bundle is GET /v1/tasks/{task_id}/bundle as a JSON document: a closed
// task's certificate and its proof, the same parts as a bundle folder
// (govhost cert verify checks either). With ?format=tar the answer is the
// folder's files as a tar archive instead.
type Bundle struct {
	Certificate governance.TaskCertificate `json:"certificate"`
	// Chain is the task's chain up to the certified head, in stored order.
	Chain []governance.EvidenceRecord `json:"chain"`
	// Policy is the exact snapshot the task ran under.
	Policy *governance.PolicySnapshot `json:"policy,omitempty"`
	// Checkpoint is the certified head signed with the data directory's
	// key (a C2SP signed note), present when asked for (?checkpoint=1).
	Checkpoint string `json:"checkpoint,omitempty"`
}

// CheckpointRequest is the body of POST /v1/checkpoints.
type CheckpointRequest struct {
	ChainID string `json:"chain_id"`
}

// Checkpoint answers POST /v1/checkpoints: a chain's current head signed
// with the data directory's key, as a C2SP signed note.
type Checkpoint struct {
	ChainID string `json:"chain_id"`
	Note    string `json:"note"`
}

// ExceptionRequest is the body of POST /v1/tasks/{task_id}/exceptions and
// POST /v1/tasks/{task_id}/break-glass: a single-use excuse for one gate's
// deny of one tool in an open task (ADR-0087 D8). An exception excuses a
// soft deny, break-glass also a hard one; either makes the task's
// certificate DEGRADED. The grant is recorded on the task's chain before
// it can excuse anything, with who issued it.
type ExceptionRequest struct {
	GateID     string `json:"gate_id"`
	ToolID     string `json:"tool_id"`
	ReasonCode string `json:"reason_code"`
	// ExpiresAt bounds the grant; there is no default duration.
	ExpiresAt time.Time `json:"expires_at"`
	// Actor is the agent the grant excuses (default: the task's actor).
	Actor *governance.ActorRef `json:"actor,omitempty"`
	// Issuer names the person who issues it ("alice"); it is recorded as
	// operator:<issuer> (default operator:operator).
	Issuer string `json:"issuer,omitempty"`
}
