package permission

import (
	"strings"
	"unicode"

	"github.com/govhost/govhost/abi"
)

// AgentLane's vocabulary and grant grammar: the eight operations, the
// first-party tools' declared operations, ToolPermissionGrant and
// parse_tool_permission_grants.

// operation is one of AgentLane's eight ToolOperation values.
type operation uint8

const (
	opReadFile operation = iota
	opSearchFiles
	opCreateFile
	opOverwriteFile
	opModifyFile
	opCreateDirectory
	opExecuteCommand
	opNetworkAccess
	numOperations
)

// operationNames is abi.Operations: operation i is abi.Operations[i].
// The assignment fails to compile if the two lists' lengths differ.
var operationNames [numOperations]string = abi.Operations

func (o operation) String() string { return operationNames[o] }

func parseOperation(s string) (operation, bool) {
	for i, name := range operationNames {
		if s == name {
			return operation(i), true
		}
	}
	return 0, false
}

// opSet is a set of operations.
type opSet uint16

func (s opSet) has(o operation) bool { return s&(1<<o) != 0 }

func setOf(ops ...operation) opSet {
	var s opSet
	for _, o := range ops {
		s |= 1 << o
	}
	return s
}

// sideEffectOps is AgentLane's default approval set: the four path side
// effects, command execution and network access.
var sideEffectOps = setOf(opCreateFile, opOverwriteFile, opModifyFile, opCreateDirectory,
	opExecuteCommand, opNetworkAccess)

// builtinTools are the first-party tools' declared operations, in
// AgentLane's order (a whole-tool grant expands in this order): abi's
// AgentLaneTools with their abi.ToolOperations.
var builtinTools = func() map[string][]operation {
	m := make(map[string][]operation, len(abi.AgentLaneTools))
	for _, tool := range abi.AgentLaneTools {
		for _, name := range abi.ToolOperations[tool] {
			op, _ := parseOperation(name)
			m[tool] = append(m[tool], op)
		}
	}
	return m
}()

// grant is one ToolPermissionGrant. entry is the grant-string entry it came
// from (trimmed, lower-cased), reported as the matched rule.
type grant struct {
	tool  string
	op    operation
	anyOp bool // whole-tool wildcard (WholeToolAnyOperation)
	entry string
}

func (g *grant) allows(tool string, op operation) bool {
	return g.tool == tool && (g.anyOp || g.op == op)
}

func firstGrant(grants []grant, tool string, op operation) *grant {
	for i := range grants {
		if grants[i].allows(tool, op) {
			return &grants[i]
		}
	}
	return nil
}

// parseGrants is parse_tool_permission_grants: a comma list of "tool" and
// "tool:operation" entries, trimmed and lower-cased, empty entries skipped.
// It returns every valid grant in order (duplicates kept) and every invalid
// entry.
func parseGrants(s string, tools map[string][]operation, anyOp bool) (grants []grant, invalid []string) {
	if strings.TrimFunc(s, pyIsSpace) == "" {
		return nil, nil
	}
	for _, raw := range strings.Split(s, ",") {
		entry := pyLower(strings.TrimFunc(raw, pyIsSpace))
		if entry == "" {
			continue
		}
		toolName, opName, hasOp := strings.Cut(entry, ":")
		ops, known := tools[toolName]
		if !known {
			invalid = append(invalid, entry)
			continue
		}
		if !hasOp {
			if anyOp {
				grants = append(grants, grant{tool: toolName, anyOp: true, entry: entry})
				continue
			}
			for _, op := range ops {
				grants = append(grants, grant{tool: toolName, op: op, entry: entry})
			}
			continue
		}
		op, ok := parseOperation(opName)
		if !ok || !containsOp(ops, op) {
			invalid = append(invalid, entry)
			continue
		}
		grants = append(grants, grant{tool: toolName, op: op, entry: entry})
	}
	return grants, invalid
}

func containsOp(ops []operation, op operation) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// pyIsSpace is Python's str.isspace for one character, which str.strip uses:
// Go's White_Space plus the four information separators U+001C..U+001F.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
