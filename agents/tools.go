package agents

import "github.com/govhost/govhost/abi"

// ToolSpec maps one agent tool onto govhost's tool and operation
// vocabulary (AgentLane's: read, find, grep, write, patch, bash), so the
// built-in gates apply unchanged.
type ToolSpec struct {
	// Tool is the governed tool id.
	Tool string
	// Operation is the AgentLane operation; OpRule chooses it when the
	// choice needs a host fact.
	Operation string
	Rule      OpRule
	// PathFrom lists the input fields that carry the tool's path, first
	// present wins; the governed arguments carry it as "path", the name
	// the path gate and the host's path facts read.
	PathFrom []string
	// CommandFrom lists the input fields that carry a shell command; the
	// governed arguments carry it as "command", the name the destructive
	// guard reads.
	CommandFrom []string
}

// OpRule chooses an operation from facts only the host has.
type OpRule int

const (
	// OpFixed: Operation as given.
	OpFixed OpRule = iota
	// OpByExistence: overwrite_file when the path exists, else
	// create_file (AgentLane's write).
	OpByExistence
	// OpByKind: read_file when the path is an existing file, else
	// search_files (AgentLane's grep, which reads one file or searches a
	// directory).
	OpByKind
	// OpByPatch: Codex's apply_patch; the patch text names the files,
	// one governed call each (Add File → write, Update / Delete File →
	// patch, Move to → write on the target).
	OpByPatch
)

// The govhost operations the agents' tools map onto (abi's vocabulary).
const (
	opReadFile       = abi.OpReadFile
	opSearchFiles    = abi.OpSearchFiles
	opCreateFile     = abi.OpCreateFile
	opOverwriteFile  = abi.OpOverwriteFile
	opModifyFile     = abi.OpModifyFile
	opExecuteCommand = abi.OpExecuteCommand
	opNetworkAccess  = abi.OpNetworkAccess
)

// The table rows shared by several dialects: every Tool is one of abi's
// coding-agent tool ids (abi.CodingTools).
var (
	shellTool  = ToolSpec{Tool: abi.ToolBash, Operation: opExecuteCommand, CommandFrom: []string{"command"}}
	readTool   = ToolSpec{Tool: abi.ToolRead, Operation: opReadFile}
	writeTool  = ToolSpec{Tool: abi.ToolWrite, Rule: OpByExistence}
	patchTool  = ToolSpec{Tool: abi.ToolPatch, Operation: opModifyFile}
	findTool   = ToolSpec{Tool: abi.ToolFind, Operation: opSearchFiles}
	grepTool   = ToolSpec{Tool: abi.ToolGrep, Rule: OpByKind}
	fetchTool  = ToolSpec{Tool: abi.ToolWebFetch, Operation: opNetworkAccess}
	searchTool = ToolSpec{Tool: abi.ToolWebSearch, Operation: opNetworkAccess}
	// planTool: the agent's to-do list and plan mode, which touch nothing
	// outside the agent.
	planTool = ToolSpec{Tool: abi.ToolPlan}
)

// with returns a copy of s reading its path from fields.
func (s ToolSpec) with(fields ...string) ToolSpec {
	s.PathFrom = fields
	return s
}

// claudeTools is Claude Code's tool table; Codex sends the same names.
//
//	Bash, PowerShell              bash / execute_command      on command
//	Read                          read / read_file            on file_path
//	Write                         write / create_file or overwrite_file, by whether the file exists
//	Edit, MultiEdit, NotebookEdit patch / modify_file         on file_path (notebook_path)
//	Glob                          find / search_files         on path (default: the cwd)
//	Grep                          grep / read_file for a file, else search_files, on path
//	LS                            find / search_files         on path
//	WebFetch, WebSearch           web_fetch, web_search / network_access
//	TodoWrite                     plan / no operation
//	mcp__<server>__<tool>         the tool id mcp__<server>__<tool>, per server and tool
//	anything else                 its own name (the default policy asks about it)
var claudeTools = map[string]ToolSpec{
	"Bash":         shellTool,
	"PowerShell":   shellTool,
	"Read":         readTool.with("file_path"),
	"Write":        writeTool.with("file_path"),
	"Edit":         patchTool.with("file_path"),
	"MultiEdit":    patchTool.with("file_path"),
	"NotebookEdit": patchTool.with("notebook_path", "file_path"),
	"Glob":         findTool.with("path"),
	"Grep":         grepTool.with("path"),
	"LS":           findTool.with("path"),
	"WebFetch":     fetchTool,
	"WebSearch":    searchTool,
	"TodoWrite":    planTool,
}

// mcpDoubleUnderscore splits Claude Code's, Codex's and Gemini CLI's MCP
// tool names, mcp__<server>__<tool>. The server name has no "__"; the tool
// name may.
func mcpDoubleUnderscore(name string) (server, tool string, ok bool) {
	const prefix = "mcp__"
	if len(name) <= len(prefix) || name[:len(prefix)] != prefix {
		return "", "", false
	}
	rest := name[len(prefix):]
	for i := 0; i+1 < len(rest); i++ {
		if rest[i] == '_' && rest[i+1] == '_' {
			if i == 0 || i+2 == len(rest) {
				return "", "", false
			}
			return rest[:i], rest[i+2:], true
		}
	}
	return "", "", false
}

// MCPToolID is the governed tool id of an MCP tool: mcp__<server>__<tool>,
// the name Claude Code, Codex and Gemini CLI already give it, so one
// policy binding names the same MCP tool for every agent. A server the
// agent does not name is "unnamed".
func MCPToolID(server, tool string) string {
	if server == "" {
		server = unnamedServer
	}
	return "mcp__" + server + "__" + tool
}

const unnamedServer = "unnamed"
