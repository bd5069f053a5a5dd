package agents

import "encoding/json"

// geminiTools maps Gemini CLI's built-in tools (docs/tools); paths come
// as file_path (older releases: absolute_path) or dir_path / path.
var geminiTools = map[string]ToolSpec{
	"run_shell_command":   shellTool,
	"read_file":           readTool.with("file_path", "absolute_path", "path"),
	"write_file":          writeTool.with("file_path", "absolute_path", "path"),
	"replace":             patchTool.with("file_path", "absolute_path", "path"),
	"glob":                findTool.with("dir_path", "path"),
	"list_directory":      findTool.with("dir_path", "path"),
	"search_file_content": grepTool.with("dir_path", "path"),
	"grep_search":         grepTool.with("dir_path", "path"),
	"web_fetch":           fetchTool,
	"google_web_search":   searchTool,
	"write_todos":         planTool,
}

// GeminiCLI is Gemini CLI's hook contract (google-gemini/gemini-cli
// docs/hooks/reference.md): command hooks; BeforeTool answers
// {"decision": "allow"|"deny", "reason"}; exit status 2 blocks with
// stderr as the reason; no "ask", no tool call id.
var GeminiCLI = register(&Dialect{
	Agent:  Gemini,
	Source: "https://github.com/google-gemini/gemini-cli/blob/main/docs/hooks/reference.md",
	Formats: []Format{{Name: "gemini", Fields: Fields{
		Event:        []string{"hook_event_name"},
		Session:      []string{"session_id"},
		Cwd:          []string{"cwd"},
		ToolName:     []string{"tool_name"},
		ToolInput:    []string{"tool_input"},
		ToolResponse: []string{"tool_response"},
	}, Events: map[string]EventSpec{
		"SessionStart":        {Kind: KindSessionStart},
		"SessionEnd":          {Kind: KindSessionEnd},
		"BeforeTool":          {Kind: KindPreTool},
		"AfterTool":           {Kind: KindPostTool, Failed: geminiFailed},
		"BeforeAgent":         {Kind: KindObserve},
		"AfterAgent":          {Kind: KindObserve},
		"BeforeModel":         {Kind: KindObserve},
		"AfterModel":          {Kind: KindObserve},
		"BeforeToolSelection": {Kind: KindObserve},
		"Notification":        {Kind: KindObserve},
		"PreCompress":         {Kind: KindObserve},
	}}},
	Tools:         geminiTools,
	MCP:           mcpDoubleUnderscore,
	Style:         StyleDecision,
	ExplicitAllow: true,
	BlockExit:     2,
	SystemMessage: true,
})

// geminiFailed: AfterTool's tool_response carries an optional error.
func geminiFailed(p payload) (bool, string) {
	var resp struct {
		Error json.RawMessage `json:"error"`
	}
	raw, ok := p["tool_response"]
	if !ok || json.Unmarshal(raw, &resp) != nil {
		return false, ""
	}
	e := resp.Error
	if len(e) == 0 || isNull(e) || string(e) == `""` || string(e) == "false" {
		return false, ""
	}
	return true, "tool_error"
}
