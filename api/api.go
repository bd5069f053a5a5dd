// Package api is the wire vocabulary of govhost's HTTP API /v1: the
// request and response bodies the server writes and the Go client reads.
// It imports only governance, so a client stays small.
package api

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Decisions an authorization answers.
const (
	DecisionAllow   = "allow"
	DecisionDeny    = "deny"
	DecisionPending = "pending_approval"
)

// TaskInfo describes an open or just-closed task.
type TaskInfo struct {
	TaskID        uuid.UUID `json:"task_id"`
	ChainID       uuid.UUID `json:"chain_id"`
	PolicyID      uuid.UUID `json:"policy_id"`
	PolicyVersion string    `json:"policy_version"`
	PolicyDigest  string    `json:"policy_digest"`
	Workspace     string    `json:"workspace,omitempty"`
}

// ClosedTask is what closing a task returns: the boundary, the chain head
// a certificate is minted against, and the operations left without a
// terminal (authorized, never completed), which keep it from minting.
type ClosedTask struct {
	TaskInfo
	Head                 string      `json:"head"`
	OpenedAt             time.Time   `json:"opened_at"`
	ClosedAt             time.Time   `json:"closed_at"`
	UnfinishedOperations []uuid.UUID `json:"unfinished_operations"`
}

// TaskState is a task as the console lists it: open, or closed with its
// head and the certificate minted for its chain (if any).
type TaskState struct {
	TaskInfo
	State         string     `json:"state"`
	Head          string     `json:"head,omitempty"`
	OpenedAt      *time.Time `json:"opened_at,omitempty"`
	ClosedAt      *time.Time `json:"closed_at,omitempty"`
	CertificateID *uuid.UUID `json:"certificate_id,omitempty"`
}

// PermitInfo is a permit as a client sees it.
type PermitInfo struct {
	PermitID       string          `json:"permit_id"`
	OperationID    uuid.UUID       `json:"operation_id"`
	TaskID         uuid.UUID       `json:"task_id"`
	Tool           string          `json:"tool"`
	ArgumentDigest string          `json:"argument_digest"`
	Arguments      json.RawMessage `json:"arguments"`
	ExpiresAt      time.Time       `json:"expires_at"`
}

// Denial is a recorded deny.
type Denial struct {
	OperationID string `json:"operation_id"`
	GateID      string `json:"gate_id,omitempty"`
	ReasonCode  string `json:"reason_code"`
	Message     string `json:"message,omitempty"`
}

// AuthorizeResult is the answer: a permit, a denial, or (when a gate asked
// for approval and the wait ran out) the ids to wait on.
type AuthorizeResult struct {
	Decision        string      `json:"decision"`
	Permit          *PermitInfo `json:"permit,omitempty"`
	Denial          *Denial     `json:"denial,omitempty"`
	AuthorizationID string      `json:"authorization_id,omitempty"`
	ApprovalID      string      `json:"approval_id,omitempty"`
}

// Approval is a brokered request as an approver sees it. Arguments are
// shown to the approver and never recorded.
type Approval struct {
	ApprovalID  string               `json:"approval_id"`
	OperationID uuid.UUID            `json:"operation_id"`
	Tool        string               `json:"tool"`
	Operation   string               `json:"operation,omitempty"`
	GateID      string               `json:"gate_id"`
	ReasonCode  string               `json:"reason_code"`
	Message     string               `json:"message,omitempty"`
	Actor       *governance.ActorRef `json:"actor,omitempty"`
	Arguments   json.RawMessage      `json:"arguments,omitempty"`
	Status      string               `json:"status"`
	Decision    string               `json:"decision,omitempty"`
	DecidedAt   *time.Time           `json:"decided_at,omitempty"`
	// Approver is who resolved it (console:<session>, link:<approval id>,
	// system/timeout, or the approver an API client named).
	Approver *governance.ActorRef `json:"approver,omitempty"`
	// ArgumentDigest is the sha256 of Arguments; a resolution may be bound
	// to it (ResolveApprovalRequest.ArgumentDigest).
	ArgumentDigest string     `json:"argument_digest,omitempty"`
	Action         string     `json:"action,omitempty"`
	MatchedRule    string     `json:"matched_rule,omitempty"`
	AgentName      string     `json:"agent_name,omitempty"`
	RunID          string     `json:"run_id,omitempty"`
	ToolCallID     string     `json:"tool_call_id,omitempty"`
	Cwd            string     `json:"cwd,omitempty"`
	PathFacts      []PathFact `json:"path_facts,omitempty"`
	// Since is when the call began to wait.
	Since time.Time `json:"since"`
}

// PathFact is one path argument as the host resolved it for the gates.
type PathFact struct {
	Arg             string `json:"arg"`
	Raw             string `json:"raw"`
	Resolved        string `json:"resolved"`
	Exists          bool   `json:"exists"`
	Kind            string `json:"kind"`
	NearestExisting string `json:"nearest_existing,omitempty"`
}

// DecisionEvent is one verdict of GET /v1/decisions/events: allow, deny
// (with the gate, reason code and message), ask (a gate wants an approver),
// or failed (no verdict: evidence could not be written). Never argument
// values.
type DecisionEvent struct {
	At             time.Time `json:"at"`
	Verdict        string    `json:"verdict"`
	TaskID         uuid.UUID `json:"task_id,omitempty"`
	ChainID        uuid.UUID `json:"chain_id,omitempty"`
	OperationID    uuid.UUID `json:"operation_id"`
	Tool           string    `json:"tool"`
	Operation      string    `json:"operation,omitempty"`
	AgentName      string    `json:"agent_name,omitempty"`
	RunID          string    `json:"run_id,omitempty"`
	ToolCallID     string    `json:"tool_call_id,omitempty"`
	ArgumentDigest string    `json:"argument_digest,omitempty"`
	GateID         string    `json:"gate_id,omitempty"`
	ReasonCode     string    `json:"reason_code,omitempty"`
	Message        string    `json:"message,omitempty"`
	ApprovalID     string    `json:"approval_id,omitempty"`
}

// Verdicts of a DecisionEvent.
const (
	VerdictAllow  = "allow"
	VerdictDeny   = "deny"
	VerdictAsk    = "ask"
	VerdictFailed = "failed"
)

// Certificate is a minted certificate and the chain it certifies.
type Certificate struct {
	ChainID     uuid.UUID                  `json:"chain_id"`
	Certificate governance.TaskCertificate `json:"certificate"`
}

// PolicySummary names a stored policy version.
type PolicySummary struct {
	PolicyID     uuid.UUID `json:"policy_id"`
	Version      string    `json:"version"`
	Digest       string    `json:"digest"`
	ReleaseState string    `json:"release_state"`
	GateCount    int       `json:"gate_count"`
}

// GateAnswer is one gate's answer in an evaluation.
type GateAnswer struct {
	GateID      string `json:"gate_id"`
	Level       string `json:"level"`
	Decision    string `json:"decision"`
	ReasonCode  string `json:"reason_code"`
	Message     string `json:"message,omitempty"`
	MatchedRule string `json:"matched_rule,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Evaluation is the combined verdict and each gate's answer.
type Evaluation struct {
	PolicyID      uuid.UUID    `json:"policy_id"`
	PolicyVersion string       `json:"policy_version"`
	Decision      string       `json:"decision"`
	ReasonCode    string       `json:"reason_code"`
	Message       string       `json:"message,omitempty"`
	MatchedRule   string       `json:"matched_rule,omitempty"`
	Gates         []GateAnswer `json:"gates"`
}

// OpenTaskRequest is the body of POST /v1/tasks: a policy pin (policy_id
// and version) or role / resource labels to resolve one (none: the global
// binding).
type OpenTaskRequest struct {
	PolicyID  string               `json:"policy_id,omitempty"`
	Version   string               `json:"version,omitempty"`
	Role      string               `json:"role,omitempty"`
	Resource  string               `json:"resource,omitempty"`
	Actor     *governance.ActorRef `json:"actor,omitempty"`
	Workspace string               `json:"workspace,omitempty"`
}

// TaskList is the body of GET /v1/tasks.
type TaskList struct {
	Tasks []TaskInfo `json:"tasks"`
}

// CallRequest is one tool call as the agent is about to make it.
type CallRequest struct {
	Tool       string            `json:"tool"`
	Operation  string            `json:"operation,omitempty"`
	Action     string            `json:"action,omitempty"`
	Arguments  json.RawMessage   `json:"arguments,omitempty"`
	Cwd        string            `json:"cwd,omitempty"`
	PathArgs   []string          `json:"path_args,omitempty"`
	RunID      string            `json:"run_id,omitempty"`
	AgentName  string            `json:"agent_name,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

// AuthorizeRequest is the body of POST /v1/tasks/{task_id}/authorize.
type AuthorizeRequest struct {
	CallRequest
	// WaitMS is how long the request may wait for an approver (at most
	// MaxWaitMS); 0 answers pending_approval at once.
	WaitMS int64 `json:"wait_ms,omitempty"`
}

// MaxWaitMS bounds every long poll.
const MaxWaitMS = 60000

// CompleteRequest is the body of POST /v1/tasks/{task_id}/complete: the
// outcome of a permitted call, never its result.
type CompleteRequest struct {
	PermitID     string `json:"permit_id"`
	Failed       bool   `json:"failed,omitempty"`
	ErrorClass   string `json:"error_class,omitempty"`
	ResultDigest string `json:"result_digest,omitempty"`
	DurationUS   int64  `json:"duration_us,omitempty"`
}

// Completed answers a recorded completion.
type Completed struct {
	PermitID string `json:"permit_id"`
	Recorded bool   `json:"recorded"`
}

// MintRequest is the body of POST /v1/chains/{chain_id}/certificate.
type MintRequest struct {
	ExpectedHead string `json:"expected_head,omitempty"`
}

// VerifyRequest is the body of POST /v1/chains/{chain_id}/verify.
type VerifyRequest struct {
	ExpectedHead string `json:"expected_head"`
}

// ActivateRequest is the body of POST /v1/policies/{id}/versions/{v}/activate.
type ActivateRequest struct {
	Actor *governance.ActorRef `json:"actor,omitempty"`
}

// BindRequest is the body of POST /v1/policies/{id}/versions/{v}/bind.
type BindRequest struct {
	Scope    string `json:"scope"`
	Selector string `json:"selector,omitempty"`
}

// ApprovalList is the body of GET /v1/approvals.
type ApprovalList struct {
	Approvals []Approval `json:"approvals"`
}

// ResolveApprovalRequest is the body of POST /v1/approvals/{approval_id}.
type ResolveApprovalRequest struct {
	Decision string               `json:"decision"`
	Approver *governance.ActorRef `json:"approver,omitempty"`
	// ArgumentDigest, when set, binds the answer to the held call's
	// arguments: a different digest resolves nothing
	// (approval_arguments_changed).
	ArgumentDigest string `json:"argument_digest,omitempty"`
	// Reason, with a deny, is the text the agent is shown (never recorded).
	Reason string `json:"reason,omitempty"`
}

// Resolved answers a resolved approval.
type Resolved struct {
	ApprovalID string `json:"approval_id"`
	Decision   string `json:"decision"`
}

// EvaluateRequest is the body of POST /v1/evaluate.
type EvaluateRequest struct {
	PolicyID  string      `json:"policy_id,omitempty"`
	Version   string      `json:"version,omitempty"`
	Role      string      `json:"role,omitempty"`
	Resource  string      `json:"resource,omitempty"`
	Workspace string      `json:"workspace,omitempty"`
	Call      CallRequest `json:"call"`
}

// ErrorBody is every error response: a stable code and a message.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error of an ErrorBody.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string `json:"status"`
}

// ChainHead is the body of GET /v1/chains/{chain_id}/head.
type ChainHead struct {
	ChainID  uuid.UUID `json:"chain_id"`
	Sequence int64     `json:"sequence"`
	Hash     string    `json:"hash"`
}

// Module describes a stored gate module: what a policy binds by sha256.
type Module struct {
	SHA256 string `json:"sha256"`
	// ABIKind is "native" (govhost's gate ABI v1) or "extism" (a module
	// built with an Extism PDK).
	ABIKind string `json:"abi_kind"`
	// Exports are the module's exported functions and memories, sorted.
	// They are the module's own text: escape them before showing them on
	// a terminal.
	Exports []string `json:"exports"`
	Size    int      `json:"size"`
	// Builtin names the built-in gate these bytes are, if any.
	Builtin string `json:"builtin,omitempty"`
}

// ModuleUpload answers POST /v1/modules: the module and whether this
// upload stored it (201) or the same bytes were already here (200).
type ModuleUpload struct {
	Module
	Created bool `json:"created"`
}

// StoredModule is one entry of GET /v1/modules. A module stored earlier
// that the host refuses now (its limits were tightened) carries the
// refusal's code and message instead of its ABI kind and exports.
type StoredModule struct {
	Module
	Refused *ErrorDetail `json:"refused,omitempty"`
}

// ModuleList is the body of GET /v1/modules.
type ModuleList struct {
	Modules []StoredModule `json:"modules"`
}

// MaxModuleBytes is the default bound of an uploaded module (a Go-built
// gate is about 3.5 MB).
const MaxModuleBytes = 32 << 20

// GoverningPolicy is what governs an unlabelled call: the globally
// resolved policy version and its gate bindings in evaluation order.
type GoverningPolicy struct {
	Policy   PolicySummary      `json:"policy"`
	Bindings []GoverningBinding `json:"bindings"`
}

// GoverningBinding is one gate binding with its module and pool.
type GoverningBinding struct {
	GateID       string    `json:"gate_id"`
	Order        int       `json:"order"`
	Level        string    `json:"level"`
	ToolIDs      []string  `json:"tool_ids"`
	ModuleDigest string    `json:"module_digest"`
	ABIKind      string    `json:"abi_kind,omitempty"`
	Builtin      string    `json:"builtin,omitempty"`
	Transform    bool      `json:"transform,omitempty"`
	Config       string    `json:"config,omitempty"`
	Pool         *PoolSize `json:"pool,omitempty"`
}

// PoolSize is a gate's instance pool: live (idle or serving) and the bound.
type PoolSize struct {
	Live int `json:"live"`
	Idle int `json:"idle"`
	Size int `json:"size"`
}
