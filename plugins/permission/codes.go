package permission

// Reason codes. They are stable: policies, evidence and tests match on them.
const (
	// LionAGI family (PermissionPolicy.check).

	// CodeModeAllowAll: mode "allow_all"; allow without building a match string.
	CodeModeAllowAll = "permission.mode_allow_all"
	// CodeModeDenyAll: mode "deny_all"; deny without building a match string.
	CodeModeDenyAll = "permission.mode_deny_all"
	// CodeShellControl: rules mode, tool bash, the command holds a shell
	// control token; denied before any rule.
	CodeShellControl = "permission.shell_control"
	// CodeDeniedByRule: a deny rule matched; MatchedRule is its pattern.
	CodeDeniedByRule = "permission.denied_by_rule"
	// CodeAllowedByRule: an allow rule matched; MatchedRule is its pattern.
	CodeAllowedByRule = "permission.allowed_by_rule"
	// CodeEscalate: an escalate rule matched (require_approval); MatchedRule
	// is its pattern.
	CodeEscalate = "permission.escalate"
	// CodeDefaultDeny: rules mode and no rule matched.
	CodeDefaultDeny = "permission.default_deny"
	// CodeEvaluatorError: the request's arguments have types the Python
	// policy fails on (it raises, and a raising hook refuses the call).
	CodeEvaluatorError = "permission.evaluator_error"

	// AgentLane family (grant and side-effect approval policies).

	// CodeGranted: a grant allows the request; MatchedRule is the grant entry.
	CodeGranted = "permission.granted"
	// CodeNotGranted: a grant layer is configured and no grant matches.
	CodeNotGranted = "permission.not_granted"
	// CodeSideEffectApproval: the operation is a covered side effect and no
	// downgrade grant matches (require_approval).
	CodeSideEffectApproval = "permission.side_effect_approval"
	// CodeApprovalDowngraded: a covered side effect is allowed because a
	// downgrade grant matches; MatchedRule is the grant entry.
	CodeApprovalDowngraded = "permission.approval_downgraded"
	// CodeNotSideEffect: only the approval layer is configured and the
	// operation is not one it covers.
	CodeNotSideEffect = "permission.not_side_effect"
	// CodeNoLayers: the AgentLane configuration has neither layer (an empty
	// AllOf composition, which allows).
	CodeNoLayers = "permission.no_layers"
	// CodeInvalidOperation: the operation is not one of AgentLane's eight, or
	// it is missing and cannot be inferred from the tool.
	CodeInvalidOperation = "permission.invalid_operation"

	// Coding family (govhost's own: decisions per tool id and operation,
	// and the read-only classification of shell commands).

	// CodeCodingTool: the tools entry for the call's tool id decided;
	// MatchedRule is "tools.<id>".
	CodeCodingTool = "permission.coding_tool"
	// CodeCodingOperation: the operations entry for the call's operation
	// decided; MatchedRule is "operations.<op>".
	CodeCodingOperation = "permission.coding_operation"
	// CodeCodingUnclassified: no entry names the call (an unknown tool, or
	// a tool without an operation); the unclassified decision applies.
	CodeCodingUnclassified = "permission.coding_unclassified"
	// CodeCommandReadOnly: every simple command of the line is a listed
	// read-only command (allow); MatchedRule lists the entries.
	CodeCommandReadOnly = "permission.command_read_only"
	// CodeCommandNotReadOnly: the line is not read-only; the commands
	// section's otherwise decision applies.
	CodeCommandNotReadOnly = "permission.command_not_read_only"
	// CodeCommandSecretPath: a word of the line matches a deny_words
	// pattern (deny); MatchedRule is the pattern.
	CodeCommandSecretPath = "permission.command_protected_path"
	// CodeCommandPipeToShell: a pipe feeds a pipe_into program (deny).
	CodeCommandPipeToShell = "permission.command_pipe_to_interpreter"

	// Both families.

	// CodeInvalidArguments: the request's arguments are not a JSON object.
	CodeInvalidArguments = "permission.invalid_arguments"
)
