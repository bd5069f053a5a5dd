package governance

// CertificateRule names one check a certificate must pass, at mint and
// offline alike. A refusal says which rule failed, plus an ADR-0087
// verification code where one applies.
type CertificateRule string

const (
	// RuleBoundary: the closed boundary is malformed (closed_at before
	// opened_at, a missing id).
	RuleBoundary CertificateRule = "boundary"
	// RuleChain: the evidence chain does not verify against the
	// certificate's head (code broken_link, content_mismatch or
	// unsupported_algorithm).
	RuleChain CertificateRule = "chain"
	// RuleTaskRecords: a record of another chain or another task is in the
	// chain (a splice).
	RuleTaskRecords CertificateRule = "task_records"
	// RuleTaskClosed: the chain does not end with exactly one TASK_CLOSED of
	// this boundary (only corrections may follow it).
	RuleTaskClosed CertificateRule = "task_closed"
	// RulePayload: a record's payload is not its type's (a GATE_EVALUATED
	// with an unknown, missing or mistyped member).
	RulePayload CertificateRule = "payload"
	// RulePolicy: the exact policy version is missing, its digest does not
	// recompute, or it is not an active snapshot with its activation time
	// (code missing_policy).
	RulePolicy CertificateRule = "policy"
	// RuleOperationPolicy: a record pins another policy version or digest
	// than the task's.
	RuleOperationPolicy CertificateRule = "operation_policy"
	// RuleTerminal: an operation has no terminal, several, or a terminal
	// without a start.
	RuleTerminal CertificateRule = "terminal"
	// RuleGateCoverage: an operation's GATE_EVALUATED records are not
	// exactly the bindings of the snapshot that apply to its tool, each
	// once per phase, in snapshot order, with the binding's level and
	// module, on the arguments the previous gate passed on; or a gate
	// record follows a blocking deny; or an operation denied for no
	// binding has a gate record.
	RuleGateCoverage CertificateRule = "gate_coverage"
	// RuleDenyThenCall: a callable terminal follows an OPERATION_DENIED or a
	// blocking deny, or an OPERATION_DENIED does not name the gate (and
	// phase and reason) that denied.
	RuleDenyThenCall CertificateRule = "deny_then_call"
	// RuleException: an excused soft deny names no matching, earlier,
	// unused exception or break-glass grant.
	RuleException CertificateRule = "exception"
	// RuleCorrection: a RECORD_SUPERSEDED names no earlier record of the
	// chain or explains nothing.
	RuleCorrection CertificateRule = "correction"
	// RuleGateSummary: the certificate's gate summary differs from the one
	// recounted from GATE_EVALUATED records.
	RuleGateSummary CertificateRule = "gate_summary"
	// RuleGrade: the certificate's grade differs from the one the evidence
	// gives (DEGRADED iff any exception was granted).
	RuleGrade CertificateRule = "grade"
	// RuleCertificate: the certificate is malformed or names another task or
	// policy than its evidence.
	RuleCertificate CertificateRule = "certificate"
	// RuleCheckpoint: a signed checkpoint does not verify or contradicts the
	// chain (truncation, rollback, fork).
	RuleCheckpoint CertificateRule = "checkpoint"
)
