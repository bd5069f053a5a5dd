package agents

import (
	"encoding/json"
	"strings"
)

// copilotTools maps Copilot CLI's tool names ("Tool names for hook
// matching" in its hooks reference).
var copilotTools = map[string]ToolSpec{
	"bash":       shellTool,
	"powershell": shellTool,
	"view":       readTool.with("path"),
	"create":     writeTool.with("path"),
	"edit":       patchTool.with("path"),
	"glob":       findTool.with("path"),
	"grep":       grepTool.with("path"),
	"web_fetch":  fetchTool,
}

// CopilotCLI is GitHub Copilot CLI's hook contract (github/docs
// cli-hooks-reference.md): .github/hooks/*.json, version 1, command hooks.
// Two payload formats: camelCase events with camelCase fields (no event
// name in the payload: `govhost hook --event` names it), and PascalCase
// events with snake_case fields (the VS Code-compatible format). preToolUse
// answers a flat {"permissionDecision", "permissionDecisionReason"}.
// "Hook failures (non-zero exit codes or timeouts) are logged and
// skipped—they never block": a block is a deny answer on exit status 0.
var CopilotCLI = register(&Dialect{
	Agent:  Copilot,
	Source: "https://docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference",
	Formats: []Format{
		{Name: "vscode", Fields: Fields{
			Event:        []string{"hook_event_name"},
			Session:      []string{"session_id"},
			Cwd:          []string{"cwd"},
			ToolName:     []string{"tool_name"},
			ToolInput:    []string{"tool_input"},
			ToolResponse: []string{"tool_result"},
			Error:        []string{"error"},
		}, Events: map[string]EventSpec{
			"SessionStart":       {Kind: KindSessionStart},
			"SessionEnd":         {Kind: KindSessionEnd},
			"PreToolUse":         {Kind: KindPreTool},
			"PostToolUse":        {Kind: KindPostTool, Failed: copilotFailed("tool_result", "result_type")},
			"PostToolUseFailure": {Kind: KindToolFailed},
			"UserPromptSubmit":   {Kind: KindObserve},
			"Stop":               {Kind: KindObserve},
			"SubagentStop":       {Kind: KindObserve},
			"ErrorOccurred":      {Kind: KindObserve},
			"PreCompact":         {Kind: KindObserve},
		}},
		{Name: "camelCase", Fields: Fields{
			Event:        []string{"hook_event_name"},
			Session:      []string{"sessionId"},
			Cwd:          []string{"cwd"},
			ToolName:     []string{"toolName"},
			ToolInput:    []string{"toolArgs"},
			ToolResponse: []string{"toolResult"},
			Error:        []string{"error"},
		}, Events: map[string]EventSpec{
			"sessionStart":        {Kind: KindSessionStart},
			"sessionEnd":          {Kind: KindSessionEnd},
			"preToolUse":          {Kind: KindPreTool},
			"postToolUse":         {Kind: KindPostTool, Failed: copilotFailed("toolResult", "resultType")},
			"postToolUseFailure":  {Kind: KindToolFailed},
			"userPromptSubmitted": {Kind: KindObserve},
			"agentStop":           {Kind: KindObserve},
			"subagentStart":       {Kind: KindObserve},
			"subagentStop":        {Kind: KindObserve},
			"errorOccurred":       {Kind: KindObserve},
			"preCompact":          {Kind: KindObserve},
			"permissionRequest":   {Kind: KindObserve},
			"Notification":        {Kind: KindObserve},
		}},
	},
	Tools:         copilotTools,
	MCP:           mcpDoubleUnderscore,
	Style:         StyleFlat,
	CanAsk:        true,
	ExplicitAllow: true,
	BlockExit:     0,
})

// copilotFailed reads a postToolUse result's type: anything but "success"
// ("failure", "denied", "error") is a failed call, the type its class.
func copilotFailed(field, typeField string) func(payload) (bool, string) {
	return func(p payload) (bool, string) {
		raw, ok := p[field]
		if !ok {
			return false, ""
		}
		var result map[string]json.RawMessage
		if json.Unmarshal(raw, &result) != nil {
			return false, ""
		}
		var t string
		if json.Unmarshal(result[typeField], &t) != nil || t == "" || t == "success" {
			return false, ""
		}
		if !isClass(t) {
			return true, "tool_error"
		}
		return true, strings.ToLower(t)
	}
}
