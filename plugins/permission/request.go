package permission

import (
	"path"
	"strings"

	"github.com/govhost/govhost/abi"
)

// The request a gate input stands for, in AgentLane's terms, and AgentLane's
// model-facing result texts (format_tool_permission_result), which both
// families put in GateOutput.Message.

// alRequest is one ToolPermissionRequest: the tool, the operation, and what
// format_tool_permission_result names as its subject.
type alRequest struct {
	tool       string
	op         operation
	hasOp      bool
	path       string // the path as given; rendered by pyPathStr in the texts
	hasPath    bool
	hasCommand bool
}

// requestBase is the part of a ToolPermissionRequest the result texts use:
// the tool, the path (from the host's path fact, else the "path" or
// "file_path" argument) and whether a command is present.
func requestBase(in *abi.GateInput, args *value) alRequest {
	base := alRequest{tool: in.Tool}
	if fact := primaryPath(in); fact != nil {
		base.path, base.hasPath = factPath(fact), true
	} else if s, ok := stringArg(args, "path"); ok {
		base.path, base.hasPath = s, true
	} else if s, ok := stringArg(args, "file_path"); ok {
		base.path, base.hasPath = s, true
	}
	if v, ok := args.get("command"); ok && v.kind != kindNull {
		base.hasCommand = true
	}
	return base
}

// buildRequests turns the gate input into AgentLane requests. The operation
// is the input's; when it is empty it is inferred the way AgentLane's
// first-party tools choose it (read, find, grep, write, patch, bash).
func buildRequests(in *abi.GateInput, args *value) ([]alRequest, abi.GateOutput, bool) {
	base := requestBase(in, args)
	fact := primaryPath(in)

	invalid := func(detail string) ([]alRequest, abi.GateOutput, bool) {
		return nil, abi.GateOutput{
			Decision:   abi.DecisionDeny,
			ReasonCode: CodeInvalidOperation,
			Detail:     detail,
			Message:    formatDenied(&base),
		}, false
	}
	single := func(op operation) ([]alRequest, abi.GateOutput, bool) {
		base.op, base.hasOp = op, true
		return []alRequest{base}, abi.GateOutput{}, true
	}

	if in.Operation != "" {
		op, ok := parseOperation(in.Operation)
		if !ok {
			return invalid("unknown operation " + pyQuote(in.Operation))
		}
		return single(op)
	}
	if op, ok := toolOperation(in.Tool); ok {
		return single(op)
	}
	switch in.Tool {
	case "grep":
		// read_file for an existing file; search_files for a directory, a
		// missing path, or no path (grep searches its working directory).
		if fact != nil && fact.Exists && fact.Kind == abi.PathKindFile {
			return single(opReadFile)
		}
		return single(opSearchFiles)
	case "write":
		if fact == nil {
			return invalid("operation missing: the write tool's operation needs a path fact")
		}
		if fact.Exists {
			return single(opOverwriteFile)
		}
		parent := path.Dir(factPath(fact))
		if fact.NearestExisting != "" && path.Clean(fact.NearestExisting) != parent {
			// The parent is missing: write asks create_directory for the
			// immediate parent first, then create_file.
			dir := base
			dir.op, dir.hasOp = opCreateDirectory, true
			dir.path = parent
			file := base
			file.op, file.hasOp = opCreateFile, true
			return []alRequest{dir, file}, abi.GateOutput{}, true
		}
		return single(opCreateFile)
	}
	return invalid("operation missing and not inferable for tool " + pyQuote(in.Tool))
}

// toolOperation is the one operation of AgentLane's single-operation tools.
func toolOperation(tool string) (operation, bool) {
	switch tool {
	case "read":
		return opReadFile, true
	case "find":
		return opSearchFiles, true
	case "patch":
		return opModifyFile, true
	case "bash":
		return opExecuteCommand, true
	}
	return 0, false
}

// primaryPath picks the path fact AgentLane would put in the request: the
// "path" argument's, then "file_path"'s, then the first.
func primaryPath(in *abi.GateInput) *abi.PathFact {
	if len(in.Paths) == 0 {
		return nil
	}
	for _, name := range [2]string{"path", "file_path"} {
		for i := range in.Paths {
			if in.Paths[i].Arg == name {
				return &in.Paths[i]
			}
		}
	}
	return &in.Paths[0]
}

// factPath is the resolved path, or the raw text when the host resolved
// nothing.
func factPath(f *abi.PathFact) string {
	if f.Resolved != "" {
		return f.Resolved
	}
	return f.Raw
}

func stringArg(args *value, name string) (string, bool) {
	v, ok := args.get(name)
	if !ok || v.kind != kindString {
		return "", false
	}
	return v.s, true
}

// pyPathStr is str(PurePosixPath(s)): repeated and trailing slashes and "."
// components go, ".." stays, exactly two leading slashes stay, "" is ".".
func pyPathStr(s string) string {
	if cleanPosixPath(s) {
		return s
	}
	root := ""
	switch {
	case strings.HasPrefix(s, "//") && !strings.HasPrefix(s, "///"):
		root = "//"
	case strings.HasPrefix(s, "/"):
		root = "/"
	}
	parts := strings.Split(s, "/")
	kept := parts[:0]
	for _, part := range parts {
		if part != "" && part != "." {
			kept = append(kept, part)
		}
	}
	out := root + strings.Join(kept, "/")
	if out == "" {
		return "."
	}
	return out
}

// subject is _permission_subject: the path in backticks, else "this command"
// when a command is present, else none.
func (r *alRequest) subject() (string, bool) {
	if r.hasPath {
		return "`" + pyPathStr(r.path) + "`", true
	}
	if r.hasCommand {
		return "this command", true
	}
	return "", false
}

// formatDenied is AgentLane's _format_permission_denied.
func formatDenied(r *alRequest) string {
	if s, ok := r.subject(); ok {
		return "permission denied: " + r.tool + " is not allowed for " + s
	}
	return "permission denied: " + r.tool + " is not allowed"
}

// formatApproval is AgentLane's _format_approval_required.
func formatApproval(r *alRequest) string {
	switch {
	case r.hasOp && r.op == opExecuteCommand:
		return "approval required: bash command requires application approval before execution"
	case r.hasOp && r.op == opNetworkAccess:
		return "approval required: " + r.tool + " network access requires application approval before execution"
	}
	if s, ok := r.subject(); ok {
		return "approval required: " + r.tool + " requires application approval for " + s + " before execution"
	}
	return "approval required: " + r.tool + " requires application approval before execution"
}

// invalidArguments is the verdict on arguments that are not a JSON object.
func invalidArguments(in *abi.GateInput, err error) abi.GateOutput {
	return abi.GateOutput{
		Decision:   abi.DecisionDeny,
		ReasonCode: CodeInvalidArguments,
		Detail:     "arguments: " + err.Error(),
		Message:    formatDenied(&alRequest{tool: in.Tool}),
	}
}

// cleanPosixPath reports whether PurePosixPath leaves s as it is: not empty,
// no empty or "." component, no trailing slash (a lone "/" is clean).
func cleanPosixPath(s string) bool {
	if s == "" {
		return false
	}
	if s == "/" {
		return true
	}
	start := 0
	if s[0] == '/' {
		start = 1
	}
	prev := start
	for i := start; i <= len(s); i++ {
		if i == len(s) || s[i] == '/' {
			comp := s[prev:i]
			if comp == "" || comp == "." {
				return false
			}
			prev = i + 1
		}
	}
	return true
}
