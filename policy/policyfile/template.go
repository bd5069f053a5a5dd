package policyfile

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
)

// WorkspaceOptions are the flags of AgentLane's workspace_tool_policy(root,
// grants, require_approval_for_side_effects, require_bash_approval,
// grants_downgrade_side_effect_approval).
type WorkspaceOptions struct {
	PolicyID uuid.UUID
	Version  string
	// Root is the workspace root (absolute; resolve symlinks first), or
	// "$workspace" ("$workspace/sub"): the task's own workspace, so one
	// policy serves every project.
	Root string
	// Grants, when non-nil, adds AgentLane's grant layer with this grant
	// string; "" is a layer that denies everything.
	Grants *string
	// RequireApprovalForSideEffects asks approval for the four path side
	// effects (create_file, overwrite_file, modify_file, create_directory).
	RequireApprovalForSideEffects bool
	// RequireBashApproval admits execute_command to the workspace layer and
	// asks approval for it.
	RequireBashApproval bool
	// GrantsDowngradeSideEffectApproval lets Grants turn those approvals
	// into allows.
	GrantsDowngradeSideEffectApproval bool
	// Tools are the tool ids the gates bind to. Default AgentLane's
	// built-in tools: read, find, grep, write, patch, bash.
	Tools []string
}

var agentlaneTools = abi.AgentLaneTools[:]

// WorkspaceTemplate returns a policy file reproducing workspace_tool_policy:
// its AllOf layers become gates in the same order (workspace path guard,
// then grants and side-effect approval in one permission gate), and
// AllOf's "strictest wins" falls out of policy order: a hard deny stops
// evaluation, an approval is asked of the broker, otherwise allow.
//
// Differences: a request asks the broker once per approving gate (AllOf
// asks once at the end); network_access stays denied, as in the original.
func WorkspaceTemplate(o WorkspaceOptions) ([]byte, error) {
	if o.Root == "" || (o.Root[0] != '/' && !IsWorkspaceRef(o.Root)) {
		return nil, errors.New(`policyfile: workspace template: root must be an absolute path or "$workspace"`)
	}
	if o.PolicyID == uuid.Nil || o.Version == "" {
		return nil, errors.New("policyfile: workspace template: policy id and version are required")
	}
	tools := o.Tools
	if len(tools) == 0 {
		tools = agentlaneTools
	}
	ops := []string{abi.OpReadFile, abi.OpSearchFiles, abi.OpCreateFile, abi.OpOverwriteFile, abi.OpModifyFile, abi.OpCreateDirectory}
	if o.RequireBashApproval {
		ops = append(ops, abi.OpExecuteCommand)
	}
	gates := []map[string]any{{
		"gate_id": "workspace", "module": "pathguard", "level": "hard", "order": 10, "tool_ids": tools,
		"config": map[string]any{"kind": "workspace", "root": o.Root, "allowed_operations": ops},
	}}

	agentlane := map[string]any{}
	if o.Grants != nil {
		agentlane["grants"] = *o.Grants
	}
	var approvalOps []string
	if o.RequireApprovalForSideEffects {
		approvalOps = append(approvalOps, abi.OpCreateFile, abi.OpOverwriteFile, abi.OpModifyFile, abi.OpCreateDirectory)
	}
	if o.RequireBashApproval {
		approvalOps = append(approvalOps, abi.OpExecuteCommand)
	}
	if len(approvalOps) > 0 {
		approval := map[string]any{"operations": approvalOps}
		if o.GrantsDowngradeSideEffectApproval && o.Grants != nil {
			approval["grants_downgrade"] = true
		}
		agentlane["side_effect_approval"] = approval
	}
	if len(agentlane) > 0 {
		gates = append(gates, map[string]any{
			"gate_id": "grants_and_approval", "module": "permission", "level": "hard", "order": 20, "tool_ids": tools,
			"config": map[string]any{"agentlane": agentlane},
		})
	}
	return json.MarshalIndent(map[string]any{"policy_id": o.PolicyID, "version": o.Version, "gates": gates}, "", "  ")
}

// IsWorkspaceRef reports a path that names the task's workspace in
// pathguard's configuration: "$workspace" or "$workspace/…".
func IsWorkspaceRef(p string) bool {
	return p == "$workspace" || strings.HasPrefix(p, "$workspace/")
}
