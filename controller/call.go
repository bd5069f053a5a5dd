package controller

import (
	"encoding/json"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// Call is one tool call as an agent made it.
type Call struct {
	// Tool is the registered tool's id.
	Tool string
	// Operation is the AgentLane operation, when the caller classified it
	// ("read", "write", "execute_command", ...).
	Operation string
	// Action is the LionAGI action string, when the caller has one. A string
	// "action" argument takes its place (LionAGI reads args.get("action")),
	// also after a transform rewrote it.
	Action string
	// Arguments is the JSON object of arguments as the model produced it.
	Arguments json.RawMessage
	// Parsed, when set, is the call's arguments already decoded,
	// canonicalised and hashed by the edge (governance.NewArguments or
	// ParseArguments); the controller takes it as is and Arguments is not
	// read. An edge that had to decode the arguments anyway (a coding
	// agent's hook reshapes the tool input) passes them on this way, so a
	// call's arguments are parsed once.
	Parsed *governance.Arguments
	// Cwd is the absolute directory relative path arguments are joined to.
	Cwd string
	// PathArgs names the arguments that carry paths, for tools whose names
	// differ from the resolver's defaults ("path", "file_path"): an MCP
	// server's move_file has source and destination; a name ending in "[]"
	// is an array of paths (read_multiple_files' "paths[]"). Nil means the
	// defaults; an empty, non-nil list means the call has no path argument.
	PathArgs []string
	// RunID, AgentName, ToolCallID and Metadata are passed to gates and to
	// approval callbacks as request context; they are not evidence. They
	// are merged with the task's ExecutionContext (TaskOptions.Context):
	// the call's values win, metadata key by key.
	RunID      string
	AgentName  string
	ToolCallID string
	Metadata   map[string]string
}

// ErrArgumentsNotObject refuses a call whose arguments are not a JSON
// object (governance.ErrArgumentsNotObject, named here for callers of
// the controller).
var ErrArgumentsNotObject = governance.ErrArgumentsNotObject

// arguments is the call's canonical argument object: Parsed when the
// edge has it, else Arguments parsed now.
func (c Call) arguments() (governance.Arguments, error) {
	if c.Parsed != nil {
		return *c.Parsed, nil
	}
	return governance.ParseArguments(c.Arguments)
}

// action is the LionAGI action of these arguments: ADR-0086 D2's chain calls
// every hook with args.get("action", "") of the current arguments, so a
// transform that rewrites "action" is rechecked on the new one. A string
// "action" argument wins; without one, the call's Action.
func actionOf(a governance.Arguments, call Call) string {
	if s, ok := a.Value["action"].(string); ok {
		return s
	}
	return call.Action
}

// NewGateInput is the input one gate sees for call: its canonical
// arguments and path facts, tagged with the gate's id and phase. Action is
// read from the arguments when they carry a string "action" (see
// actionOf), else it is call.Action. Context
// carries the call's request fields; the controller adds the operation id
// and actor.
func NewGateInput(call Call, args governance.Arguments, facts []abi.PathFact, gateID string, phase abi.Phase) abi.GateInput {
	return abi.GateInput{
		ABIVersion: abi.Version, GateID: gateID, Phase: phase, Tool: call.Tool,
		Operation: call.Operation, Action: actionOf(args, call), Arguments: json.RawMessage(args.Canonical),
		ArgumentOrder: args.Order, Cwd: call.Cwd, Paths: facts,
		Context: abi.OperationInfo{RunID: call.RunID, AgentName: call.AgentName, ToolCallID: call.ToolCallID, Metadata: call.Metadata},
	}
}

// ExecutionContext is the framework correlation a caller attaches to a
// task's calls (AgentLane's ToolExecutionContext): run, agent and tool-call
// ids and app-defined metadata. It is request context for gates and
// approvers, never evidence.
type ExecutionContext struct {
	RunID      string
	AgentName  string
	ToolCallID string
	Metadata   map[string]string
}

// withContext merges x into the call's request fields the way AgentLane's
// evaluate_tool_permission merges a context into a request: the call's
// run_id, agent_name and tool_call_id are kept unless empty, and metadata
// is x's map overlaid by the call's ("request metadata winning on key
// conflicts"). The call's own map is not modified.
func (c Call) withContext(x ExecutionContext) Call {
	if c.RunID == "" {
		c.RunID = x.RunID
	}
	if c.AgentName == "" {
		c.AgentName = x.AgentName
	}
	if c.ToolCallID == "" {
		c.ToolCallID = x.ToolCallID
	}
	if len(x.Metadata) > 0 {
		merged := make(map[string]string, len(x.Metadata)+len(c.Metadata))
		for k, v := range x.Metadata {
			merged[k] = v
		}
		for k, v := range c.Metadata {
			merged[k] = v
		}
		c.Metadata = merged
	}
	return c
}

// operationInfo is the context a gate sees; opText is the operation id as
// text (operation.idTexts), actor the gate's own copy of the actor (nil
// for none).
func operationInfo(call Call, opText string, actor *abi.ActorRef) abi.OperationInfo {
	return abi.OperationInfo{
		OperationID: opText,
		RunID:       call.RunID,
		AgentName:   call.AgentName,
		ToolCallID:  call.ToolCallID,
		Actor:       actor,
		Metadata:    copyMetadata(call.Metadata),
	}
}

// copyMetadata gives each gate and approver a map of its own (nil for
// none), so one cannot change what the next sees.
func copyMetadata(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
