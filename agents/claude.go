package agents

// claudeFields are Claude Code's hook input keys; Codex sends the same.
var claudeFields = Fields{
	Event:        []string{"hook_event_name"},
	Session:      []string{"session_id"},
	Cwd:          []string{"cwd"},
	ToolName:     []string{"tool_name"},
	ToolInput:    []string{"tool_input"},
	ToolUseID:    []string{"tool_use_id"},
	ToolResponse: []string{"tool_response"},
	Error:        []string{"error"},
}

// ClaudeCode is Claude Code's hook contract (code.claude.com/docs/en/hooks):
// command and HTTP hooks; PreToolUse answers
// hookSpecificOutput.permissionDecision allow / deny / ask; exit status 2
// blocks; an HTTP hook's non-2xx blocks only with onFailure: "block".
var ClaudeCode = register(&Dialect{
	Agent:  Claude,
	Source: "https://code.claude.com/docs/en/hooks",
	Formats: []Format{{Name: "claude", Fields: claudeFields, Events: map[string]EventSpec{
		"SessionStart":       {Kind: KindSessionStart},
		"SessionEnd":         {Kind: KindSessionEnd},
		"PreToolUse":         {Kind: KindPreTool},
		"PostToolUse":        {Kind: KindPostTool},
		"PostToolUseFailure": {Kind: KindToolFailed},
		// A call PreToolUse allowed that Claude Code's own permission
		// rules then denied never runs.
		"PermissionDenied":    {Kind: KindToolNotRun},
		"PermissionRequest":   {Kind: KindObserve},
		"PostToolBatch":       {Kind: KindObserve},
		"Setup":               {Kind: KindObserve},
		"InstructionsLoaded":  {Kind: KindObserve},
		"UserPromptSubmit":    {Kind: KindObserve},
		"UserPromptExpansion": {Kind: KindObserve},
		"MessageDisplay":      {Kind: KindObserve},
		"Notification":        {Kind: KindObserve},
		"SubagentStart":       {Kind: KindObserve},
		"SubagentStop":        {Kind: KindObserve},
		"TaskCreated":         {Kind: KindObserve},
		"TaskCompleted":       {Kind: KindObserve},
		"Stop":                {Kind: KindObserve},
		"StopFailure":         {Kind: KindObserve},
		"TeammateIdle":        {Kind: KindObserve},
		"ConfigChange":        {Kind: KindObserve},
		"CwdChanged":          {Kind: KindObserve},
		"DirectoryAdded":      {Kind: KindObserve},
		"FileChanged":         {Kind: KindObserve},
		"WorktreeCreate":      {Kind: KindObserve},
		"WorktreeRemove":      {Kind: KindObserve},
		"PreCompact":          {Kind: KindObserve},
		"PostCompact":         {Kind: KindObserve},
		"Elicitation":         {Kind: KindObserve},
		"ElicitationResult":   {Kind: KindObserve},
	}}},
	Tools:         claudeTools,
	MCP:           mcpDoubleUnderscore,
	Style:         StyleHookSpecific,
	CanAsk:        true,
	ExplicitAllow: true,
	BlockExit:     2,
	HTTP:          true,
	SystemMessage: true,
})
