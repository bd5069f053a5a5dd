package agents

import "github.com/govhost/govhost/abi"

// codexTools is Claude Code's table plus apply_patch, Codex's file editor
// (its tool_input.command holds the patch, one governed call per file),
// and update_plan, its to-do list.
var codexTools = func() map[string]ToolSpec {
	t := make(map[string]ToolSpec, len(claudeTools)+2)
	for k, v := range claudeTools {
		t[k] = v
	}
	t["apply_patch"] = ToolSpec{Tool: abi.ToolPatch, Rule: OpByPatch, CommandFrom: []string{"command", "patch", "input"}}
	t["update_plan"] = planTool
	return t
}()

// CodexCLI is OpenAI Codex CLI's hook contract
// (developers.openai.com/codex/hooks): Claude Code's wire format; command
// hooks only; only permissionDecision "deny" is honoured (allow and ask
// are not), so an allow is always no opinion and an approval is held on
// the broker; exit status 2 blocks. Codex has no SessionEnd: its Stop
// (end of a turn) closes the session's task.
var CodexCLI = register(&Dialect{
	Agent:  Codex,
	Source: "https://developers.openai.com/codex/hooks",
	Formats: []Format{{Name: "codex", Fields: claudeFields, Events: map[string]EventSpec{
		"SessionStart":      {Kind: KindSessionStart},
		"PreToolUse":        {Kind: KindPreTool},
		"PostToolUse":       {Kind: KindPostTool},
		"Stop":              {Kind: KindSessionEnd},
		"StopFailure":       {Kind: KindSessionEnd},
		"PermissionRequest": {Kind: KindObserve},
		"UserPromptSubmit":  {Kind: KindObserve},
		"PreCompact":        {Kind: KindObserve},
		"PostCompact":       {Kind: KindObserve},
		"SubagentStart":     {Kind: KindObserve},
		"SubagentStop":      {Kind: KindObserve},
	}}},
	Tools:         codexTools,
	MCP:           mcpDoubleUnderscore,
	Style:         StyleHookSpecific,
	BlockExit:     2,
	SystemMessage: true,
})
