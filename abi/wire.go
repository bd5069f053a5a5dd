package abi

import "encoding/json"

// Decision is a gate's verdict. The set is closed: a module that answers
// anything else is treated as failed by the host.
type Decision string

const (
	DecisionAllow           Decision = "allow"
	DecisionDeny            Decision = "deny"
	DecisionRequireApproval Decision = "require_approval"
)

// Valid reports whether d is one of the three decisions of ABI v1.
func (d Decision) Valid() bool {
	switch d {
	case DecisionAllow, DecisionDeny, DecisionRequireApproval:
		return true
	}
	return false
}

// Phase says on which arguments a check gate is run. ADR-0086 D2 runs
// security checks on the original arguments and, when a transform changed
// them, again on the final ones.
type Phase string

const (
	PhaseCheck   Phase = "check"
	PhaseRecheck Phase = "recheck"
)

// PathKind classifies what a resolved path names on the host.
type PathKind string

const (
	PathKindFile    PathKind = "file"
	PathKindDir     PathKind = "dir"
	PathKindOther   PathKind = "other"
	PathKindMissing PathKind = "missing"
)

// PathFact is what the host learned about one path argument before the gates
// ran. Gates have no filesystem: they decide on these facts. This is a
// framework boundary, not a TOCTOU-safe sandbox.
type PathFact struct {
	// Arg is the argument name the path came from ("path", "file_path").
	Arg string `json:"arg"`
	// Raw is the argument's text as the caller sent it.
	Raw string `json:"raw"`
	// Resolved is the absolute path after joining with cwd, cleaning and
	// resolving symlinks of the nearest existing parent (and of the path
	// itself when it exists).
	Resolved string `json:"resolved"`
	// Exists reports whether Resolved exists.
	Exists bool `json:"exists"`
	// Kind is what Resolved names; PathKindMissing when it does not exist.
	Kind PathKind `json:"kind"`
	// NearestExisting is the deepest existing directory on the way to
	// Resolved, itself resolved (Resolved when it is an existing directory;
	// a regular file is never an ancestor).
	NearestExisting string `json:"nearest_existing"`
	// Link reports that the path as asked for (cwd joined with the raw
	// text, cleaned, its intermediate symlinks followed) names a symbolic
	// link itself: its last component is a link (Python's
	// Path.is_symlink(), what LionAGI's path_safety refuses). Absent when
	// false.
	Link bool `json:"link,omitempty"`
}

// ActorRef names who acts, as supplied by the caller: policy input, not proof
// of identity.
type ActorRef struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// OperationInfo is the part of the operation context a gate may see.
type OperationInfo struct {
	OperationID string            `json:"operation_id,omitempty"`
	Actor       *ActorRef         `json:"actor,omitempty"`
	RunID       string            `json:"run_id,omitempty"`
	AgentName   string            `json:"agent_name,omitempty"`
	ToolCallID  string            `json:"tool_call_id,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	// Assignments is the task's duty history as the host derived it from
	// committed evidence: which actor performed which duty (the tool of a
	// completed operation), each actor and duty once, in the order first
	// performed. nil when the host supplies no
	// history (an operation outside a task); an empty list when the task
	// has none yet. A separation-of-duties gate denies without it.
	Assignments *[]Assignment `json:"assignments,omitempty"`
}

// Assignment is one entry of a task's duty history.
type Assignment struct {
	Actor ActorRef `json:"actor"`
	Duty  string   `json:"duty"`
}

// GateInput is the request a gate evaluates. It is encoded as JSON and
// written into guest memory; each gate gets its own copy.
type GateInput struct {
	// ABIVersion is the version the host speaks (Version).
	ABIVersion int `json:"abi_version"`
	// GateID is the binding's gate id from the policy snapshot.
	GateID string `json:"gate_id"`
	// Phase is PhaseCheck, or PhaseRecheck when a transform changed the
	// arguments and the check gates run again on the final ones.
	Phase Phase `json:"phase"`
	// Tool is the tool's id ("bash", "reader", "read", "web_fetch").
	Tool string `json:"tool"`
	// Operation is the AgentLane operation ("read", "write", "execute", ...)
	// when the caller classified the request; empty otherwise.
	Operation string `json:"operation,omitempty"`
	// Action is the LionAGI action string, when the caller supplied one.
	Action string `json:"action,omitempty"`
	// Arguments is the canonical JSON object of the tool's arguments.
	Arguments json.RawMessage `json:"arguments"`
	// ArgumentOrder lists the argument names in the order the caller sent
	// them (Arguments itself is key-sorted).
	ArgumentOrder []string `json:"argument_order,omitempty"`
	// Cwd is the absolute working directory relative paths are joined to.
	Cwd string `json:"cwd,omitempty"`
	// Workspace is the task's workspace root, resolved by the host like a
	// path fact (real absolute path); empty when the task names none. A
	// policy that says "the task's workspace" (pathguard's "$workspace")
	// serves every project on the machine through it.
	Workspace string `json:"workspace,omitempty"`
	// Paths holds one fact per path-carrying argument, in ArgumentOrder.
	Paths []PathFact `json:"paths,omitempty"`
	// Context is the operation context visible to gates.
	Context OperationInfo `json:"context"`
}

// GateOutput is a gate's verdict, encoded as JSON by the guest.
type GateOutput struct {
	Decision Decision `json:"decision"`
	// ReasonCode is a stable, dot-separated code ("destructive.rm_recursive_force").
	ReasonCode string `json:"reason_code"`
	// Detail is free text for humans; never copied into evidence.
	Detail string `json:"detail,omitempty"`
	// Message is the model-facing text shown to an agent for a deny or
	// require_approval (AgentLane's stable result texts).
	Message string `json:"message,omitempty"`
	// MatchedRule is the rule that decided, when the gate is rule based.
	MatchedRule string `json:"matched_rule,omitempty"`
	// DenyMessage, with require_approval, is the model-facing text shown
	// when the approver denies (AgentLane renders a denied approval as
	// "permission denied: write is not allowed for `…`", not as the
	// approval-required text). Empty: the host says
	// "permission denied: <tool> is not allowed".
	DenyMessage string `json:"deny_message,omitempty"`
	// Arguments, when present, replaces the tool's arguments. Only honoured
	// for bindings marked as transforms.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}
