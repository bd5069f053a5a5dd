package agents

import "strings"

// cursorTools maps Cursor's agent tools as its preToolUse names them.
var cursorTools = map[string]ToolSpec{
	"Shell":      shellTool,
	"Read":       readTool.with("file_path", "path", "target_file"),
	"Write":      writeTool.with("file_path", "path", "target_file"),
	"Edit":       patchTool.with("file_path", "path", "target_file"),
	"StrReplace": patchTool.with("file_path", "path", "target_file"),
	"Grep":       grepTool.with("path", "target_directory"),
	"Glob":       findTool.with("path", "target_directory"),
	"WebFetch":   fetchTool,
	"WebSearch":  searchTool,
}

// cursorMCP accepts mcp__<server>__<tool> and Cursor's "MCP:<tool>", which
// names no server.
func cursorMCP(name string) (string, string, bool) {
	if server, tool, ok := mcpDoubleUnderscore(name); ok {
		return server, tool, true
	}
	if rest, ok := strings.CutPrefix(name, "MCP:"); ok && rest != "" {
		return unnamedServer, rest, true
	}
	return "", "", false
}

// CursorAgent is Cursor's hook contract (cursor.com/docs/agent/hooks):
// .cursor/hooks.json, command hooks; the permission events (preToolUse,
// beforeShellExecution, beforeMCPExecution, beforeReadFile) answer
// {"permission": "allow"|"deny"|"ask", "user_message", "agent_message"};
// exit status 2 blocks. A conversation is the session.
var CursorAgent = register(&Dialect{
	Agent:  Cursor,
	Source: "https://cursor.com/docs/agent/hooks",
	Formats: []Format{{Name: "cursor", Fields: Fields{
		Event:        []string{"hook_event_name"},
		Session:      []string{"conversation_id", "session_id"},
		Cwd:          []string{"cwd"},
		Roots:        "workspace_roots",
		ToolName:     []string{"tool_name"},
		ToolInput:    []string{"tool_input"},
		ToolUseID:    []string{"tool_use_id"},
		ToolResponse: []string{"tool_output", "result_json", "output"},
		Error:        []string{"error_message"},
	}, Events: map[string]EventSpec{
		"sessionStart":         {Kind: KindSessionStart},
		"sessionEnd":           {Kind: KindSessionEnd},
		"preToolUse":           {Kind: KindPreTool},
		"postToolUse":          {Kind: KindPostTool},
		"postToolUseFailure":   {Kind: KindToolFailed},
		"beforeShellExecution": {Kind: KindPreTool, Tool: "Shell", InputFields: []string{"command"}},
		"afterShellExecution":  {Kind: KindPostTool, Tool: "Shell", InputFields: []string{"command"}},
		"beforeMCPExecution":   {Kind: KindPreTool, MCPServerless: true},
		"afterMCPExecution":    {Kind: KindPostTool, MCPServerless: true},
		"beforeReadFile":       {Kind: KindPreTool, Tool: "Read", InputFields: []string{"file_path"}},
		"afterFileEdit":        {Kind: KindObserve},
		"beforeSubmitPrompt":   {Kind: KindObserve},
		"afterAgentResponse":   {Kind: KindObserve},
		"afterAgentThought":    {Kind: KindObserve},
		"subagentStart":        {Kind: KindObserve},
		"subagentStop":         {Kind: KindObserve},
		"preCompact":           {Kind: KindObserve},
		"stop":                 {Kind: KindObserve},
		"beforeTabFileRead":    {Kind: KindObserve},
		"afterTabFileEdit":     {Kind: KindObserve},
	}}},
	Tools:         cursorTools,
	MCP:           cursorMCP,
	Style:         StylePermission,
	CanAsk:        true,
	ExplicitAllow: true,
	BlockExit:     2,
})
