package abi

// The one operation vocabulary (AgentLane's ToolOperation) and the
// coding-agent tool ids. Every front end (the agents' hook tables, the MCP
// mapping, the policy templates and the default policy) produces these
// names, and the built-in gates decide on them; nothing else spells them.

// The eight operations a governed call may declare in GateInput.Operation.
const (
	OpReadFile        = "read_file"
	OpSearchFiles     = "search_files"
	OpCreateFile      = "create_file"
	OpOverwriteFile   = "overwrite_file"
	OpModifyFile      = "modify_file"
	OpCreateDirectory = "create_directory"
	OpExecuteCommand  = "execute_command"
	OpNetworkAccess   = "network_access"
)

// Operations lists the eight operations in AgentLane's order. Callers must
// not modify it.
var Operations = [...]string{
	OpReadFile, OpSearchFiles, OpCreateFile, OpOverwriteFile,
	OpModifyFile, OpCreateDirectory, OpExecuteCommand, OpNetworkAccess,
}

// IsOperation reports whether op is one of the eight operations.
func IsOperation(op string) bool {
	switch op {
	case OpReadFile, OpSearchFiles, OpCreateFile, OpOverwriteFile,
		OpModifyFile, OpCreateDirectory, OpExecuteCommand, OpNetworkAccess:
		return true
	}
	return false
}

// IsPathOperation reports AgentLane's six path operations (every operation
// but execute_command and network_access).
func IsPathOperation(op string) bool {
	switch op {
	case OpReadFile, OpSearchFiles, OpCreateFile, OpOverwriteFile, OpModifyFile, OpCreateDirectory:
		return true
	}
	return false
}

// IsWriteOperation reports the four path operations that change the
// filesystem.
func IsWriteOperation(op string) bool {
	switch op {
	case OpCreateFile, OpOverwriteFile, OpModifyFile, OpCreateDirectory:
		return true
	}
	return false
}

// The coding-agent tool ids: what a hook front end names an agent's
// built-in tool, whatever the agent calls it (Claude Code's Read, Gemini
// CLI's read_file and Copilot CLI's view are all ToolRead). The first six
// are AgentLane's first-party tools.
const (
	ToolRead  = "read"  // read one file: read_file
	ToolFind  = "find"  // list or glob a directory: search_files
	ToolGrep  = "grep"  // search contents: read_file on a file, else search_files
	ToolWrite = "write" // write a whole file: create_file or overwrite_file
	ToolPatch = "patch" // edit a file in place: modify_file
	ToolBash  = "bash"  // run a shell command: execute_command
	// ToolWebFetch and ToolWebSearch reach the network: network_access.
	ToolWebFetch  = "web_fetch"
	ToolWebSearch = "web_search"
	// ToolPlan is the agent's own bookkeeping (to-do lists, plan mode): no
	// operation, nothing outside the agent.
	ToolPlan = "plan"
)

// CodingTools lists the coding-agent tool ids. Callers must not modify it.
var CodingTools = [...]string{
	ToolRead, ToolFind, ToolGrep, ToolWrite, ToolPatch, ToolBash,
	ToolWebFetch, ToolWebSearch, ToolPlan,
}

// ToolOperations are the operations each coding-agent tool may declare, in
// AgentLane's order (its grant grammar expands a whole-tool grant in this
// order). ToolPlan declares none. Callers must not modify it.
var ToolOperations = map[string][]string{
	ToolRead:      {OpReadFile},
	ToolFind:      {OpSearchFiles},
	ToolGrep:      {OpReadFile, OpSearchFiles},
	ToolWrite:     {OpCreateFile, OpOverwriteFile, OpCreateDirectory},
	ToolPatch:     {OpModifyFile},
	ToolBash:      {OpExecuteCommand},
	ToolWebFetch:  {OpNetworkAccess},
	ToolWebSearch: {OpNetworkAccess},
	ToolPlan:      nil,
}

// AgentLaneTools are AgentLane's six first-party tools, the ones its grant
// grammar and operation inference know.
var AgentLaneTools = [...]string{ToolRead, ToolFind, ToolGrep, ToolWrite, ToolPatch, ToolBash}
