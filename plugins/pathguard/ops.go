package pathguard

import "github.com/govhost/govhost/abi"

// The operation names, re-exported from abi (the one vocabulary) for the
// gate's own code and its Go callers.
const (
	OpReadFile        = abi.OpReadFile
	OpSearchFiles     = abi.OpSearchFiles
	OpCreateFile      = abi.OpCreateFile
	OpOverwriteFile   = abi.OpOverwriteFile
	OpModifyFile      = abi.OpModifyFile
	OpCreateDirectory = abi.OpCreateDirectory
	OpExecuteCommand  = abi.OpExecuteCommand
	OpNetworkAccess   = abi.OpNetworkAccess
)

type opSet map[string]bool

func parseOp(s string) (string, bool) { return s, abi.IsOperation(s) }

// isPathOp reports AgentLane's six path operations.
func isPathOp(op string) bool { return abi.IsPathOperation(op) }
