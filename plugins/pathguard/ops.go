package pathguard

// AgentLane's operation names (ToolOperation).
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

type opSet map[string]bool

func parseOp(s string) (string, bool) {
	switch s {
	case OpReadFile, OpSearchFiles, OpCreateFile, OpOverwriteFile, OpModifyFile,
		OpCreateDirectory, OpExecuteCommand, OpNetworkAccess:
		return s, true
	}
	return "", false
}

// isPathOp reports AgentLane's six path operations.
func isPathOp(op string) bool {
	switch op {
	case OpReadFile, OpSearchFiles, OpCreateFile, OpOverwriteFile, OpModifyFile, OpCreateDirectory:
		return true
	}
	return false
}
