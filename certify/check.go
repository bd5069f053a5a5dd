package certify

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// Evidence is what a certificate is checked against: the closed boundary,
// its chain (up to and including the expected head) and the exact policy
// snapshot the task pinned (nil when it could not be retrieved).
type Evidence struct {
	Boundary     governance.ClosedTaskBoundary
	Records      []governance.EvidenceRecord
	ExpectedHead string
	Policy       *governance.PolicySnapshot
}

// Outcome is what the evidence supports: the recounted gate summary and
// the grade.
type Outcome struct {
	Summary governance.GateSummary
	Grade   governance.ProcessGrade
	// Checked is the number of records verified.
	Checked int64
}

// Check runs every mint rule over ev, in this order, and returns the first
// failure as a *governance.CertificateError naming its rule:
//
//  1. boundary: closed_at at or after opened_at, every id present;
//  2. chain: the records verify to ExpectedHead (ADR-0087 D3's codes);
//  3. task_records: every record is on the boundary's chain, and every
//     record naming a task names this one;
//  4. task_closed: exactly one TASK_CLOSED of this boundary, at the head or
//     followed only by RECORD_SUPERSEDED corrections, with the boundary's
//     times;
//  5. policy: the snapshot is the task's exact version and its digest
//     recomputes (missing_policy);
//  6. operation_policy: every record pins the task's policy id and
//     version, and every digest a record names is the snapshot's;
//  7. deny_then_call, terminal: per operation, exactly one terminal after
//     its start, and no callable terminal after OPERATION_DENIED or a
//     blocking deny;
//  8. gate_coverage: before a callable terminal, a GATE_EVALUATED (phase
//     check) for every binding that applies to the tool — and phase
//     recheck for every check binding when a transform applies or a
//     recheck was recorded — each with its binding's level and module;
//  9. exception: every excused soft deny names an earlier exception grant
//     of that gate, tool and actor, valid at the time, used once;
//  10. correction: every RECORD_SUPERSEDED names an earlier record and the
//     fields it corrects.
//
// The gate summary is recounted from GATE_EVALUATED records; the grade is
// DEGRADED iff any EXCEPTION_GRANTED is on the chain, whatever corrects it
// later.
func Check(ev Evidence) (Outcome, error) {
	b, err := governance.NewClosedTaskBoundary(ev.Boundary)
	if err != nil {
		return Outcome{}, refuse(governance.RuleBoundary, "", "", err.Error())
	}
	res := evidence.VerifyRecords(ev.Records, ev.ExpectedHead)
	if !res.Valid {
		id := ""
		if res.FailedRecordID.Valid {
			id = res.FailedRecordID.UUID.String()
		}
		return Outcome{}, refuse(governance.RuleChain, res.FailureCode, id, "evidence chain does not verify against the expected head")
	}
	c := &checker{b: b, recs: ev.Records, snap: ev.Policy}
	if err := c.parse(); err != nil {
		return Outcome{}, err
	}
	for _, step := range []func() error{c.taskRecords, c.taskClosed, c.policy, c.operationPolicy, c.operations, c.corrections} {
		if err := step(); err != nil {
			return Outcome{}, err
		}
	}
	out := Outcome{Summary: c.summary, Grade: governance.GradeFull, Checked: res.CheckedRecords}
	if c.summary.ExceptionCount > 0 {
		out.Grade = governance.GradeDegraded
	}
	return out, nil
}

func refuse(rule governance.CertificateRule, code governance.VerificationFailureCode, recordID, reason string) error {
	return &governance.CertificateError{Rule: rule, Code: code, RecordID: recordID, Reason: reason}
}

// checker holds one Check's parsed records.
type checker struct {
	b        governance.ClosedTaskBoundary
	recs     []governance.EvidenceRecord
	payloads []payload
	snap     *governance.PolicySnapshot
	summary  governance.GateSummary
}

func (c *checker) parse() error {
	c.payloads = make([]payload, len(c.recs))
	for i, r := range c.recs {
		p, err := parsePayload(r.PayloadJSON)
		if err != nil {
			return refuse(governance.RuleChain, governance.ContentMismatch, r.RecordID.String(), "payload_json is not a canonical JSON object")
		}
		c.payloads[i] = p
	}
	return nil
}

func (c *checker) taskRecords() error {
	for i, r := range c.recs {
		if r.ChainID != c.b.ChainID {
			return refuse(governance.RuleTaskRecords, governance.BrokenLink, r.RecordID.String(), fmt.Sprintf("record of chain %s in the chain of task %s", r.ChainID, c.b.TaskBoundaryID))
		}
		if id, ok := c.payloads[i].str("task_boundary_id"); ok && id != c.b.TaskBoundaryID.String() {
			return refuse(governance.RuleTaskRecords, governance.BrokenLink, r.RecordID.String(), fmt.Sprintf("record of task %s in the chain of task %s", id, c.b.TaskBoundaryID))
		}
	}
	return nil
}

func (c *checker) taskClosed() error {
	closeAt := -1
	for i, r := range c.recs {
		if r.RecordType != governance.TaskClosed {
			continue
		}
		if closeAt >= 0 {
			return refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "the task is closed twice")
		}
		closeAt = i
	}
	if closeAt < 0 {
		return refuse(governance.RuleTaskClosed, "", "", "no TASK_CLOSED at the expected head: the boundary is open")
	}
	for _, r := range c.recs[closeAt+1:] {
		if r.RecordType != governance.RecordSuperseded {
			return refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "records follow the task's TASK_CLOSED")
		}
	}
	r, p := c.recs[closeAt], c.payloads[closeAt]
	opened, _ := p.time("opened_at")
	closed, _ := p.time("closed_at")
	switch {
	case !p.has("task_boundary_id"):
		return refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "TASK_CLOSED names no task")
	case !opened.Equal(c.b.OpenedAt) || !closed.Equal(c.b.ClosedAt):
		return refuse(governance.RuleTaskClosed, "", r.RecordID.String(), "TASK_CLOSED records other times than the boundary")
	}
	return nil
}

func (c *checker) policy() error {
	if c.snap == nil {
		return refuse(governance.RulePolicy, governance.MissingPolicy, "", fmt.Sprintf("policy %s@%s is not available", c.b.PolicyID, c.b.PolicyVersion))
	}
	s := c.snap
	if s.PolicyID() != c.b.PolicyID || s.Version() != c.b.PolicyVersion {
		return refuse(governance.RulePolicy, governance.MissingPolicy, "", fmt.Sprintf("the policy snapshot is %s, the task pinned %s@%s", s.Ref(), c.b.PolicyID, c.b.PolicyVersion))
	}
	digest, err := governance.PolicySnapshotDigest(s.PolicyID(), s.Version(), s.GateBindings())
	if err != nil || digest != s.Digest() {
		return refuse(governance.RulePolicy, governance.MissingPolicy, "", "the policy snapshot's digest does not recompute")
	}
	return nil
}

func (c *checker) operationPolicy() error {
	for i, r := range c.recs {
		if r.PolicyID != c.b.PolicyID || r.PolicyVersion != c.b.PolicyVersion {
			return refuse(governance.RuleOperationPolicy, "", r.RecordID.String(), fmt.Sprintf("record pins policy %s@%s, the task pins %s@%s", r.PolicyID, r.PolicyVersion, c.b.PolicyID, c.b.PolicyVersion))
		}
		if d, ok := c.payloads[i].str("policy_digest"); ok && d != c.snap.Digest() {
			return refuse(governance.RuleOperationPolicy, "", r.RecordID.String(), "record names policy digest "+d+", the task's policy has "+c.snap.Digest())
		}
	}
	return nil
}

// op is what one operation's records say.
type op struct {
	started   int // index of OPERATION_STARTED, -1 if none
	terminals []int
	gates     []int // GATE_EVALUATED indexes in order
}

func (c *checker) operations() error {
	ops := map[uuid.UUID]*op{}
	grantsUsed := map[string]bool{}
	var order []uuid.UUID
	get := func(id uuid.UUID) *op {
		o := ops[id]
		if o == nil {
			o = &op{started: -1}
			ops[id] = o
			order = append(order, id)
		}
		return o
	}
	for i, r := range c.recs {
		switch r.RecordType {
		case governance.OperationStarted:
			o := get(r.OperationID.UUID)
			if o.started >= 0 {
				return refuse(governance.RuleTerminal, "", r.RecordID.String(), "operation started twice")
			}
			o.started = i
		case governance.OperationDenied, governance.CallableCompleted, governance.CallableFailed:
			o := get(r.OperationID.UUID)
			o.terminals = append(o.terminals, i)
		case governance.GateEvaluated:
			o := get(r.OperationID.UUID)
			o.gates = append(o.gates, i)
			p := c.payloads[i]
			level, _ := p.str("level")
			decision, _ := p.str("decision")
			if !governance.GateLevel(level).Valid() || !governance.GateDecision(decision).Valid() {
				return refuse(governance.RuleGateCoverage, "", r.RecordID.String(), "GATE_EVALUATED has no valid level and decision")
			}
			c.summary.Add(governance.GateLevel(level), governance.GateDecision(decision))
			if grant, ok := p.str("exception_grant_id"); ok {
				switch {
				case decision != string(governance.Deny):
					return refuse(governance.RuleException, "", r.RecordID.String(), "a gate record that did not deny names exception grant "+grant)
				case grantsUsed[grant]:
					return refuse(governance.RuleException, "", r.RecordID.String(), "exception grant "+grant+" used twice")
				}
				grantsUsed[grant] = true
			}
		case governance.ExceptionGranted:
			c.summary.ExceptionCount++
		}
	}
	for _, id := range order {
		if err := c.operation(id, ops[id]); err != nil {
			return err
		}
	}
	return nil
}

func isCallable(t governance.EvidenceType) bool {
	return t == governance.CallableCompleted || t == governance.CallableFailed
}

func (c *checker) operation(id uuid.UUID, o *op) error {
	if o.started < 0 {
		at := o.gates
		if len(o.terminals) > 0 {
			at = o.terminals
		}
		return refuse(governance.RuleTerminal, "", c.recs[at[0]].RecordID.String(), fmt.Sprintf("records of operation %s that never started", id))
	}
	startID := c.recs[o.started].RecordID.String()
	// A callable terminal after a denial is the worst case: check it first,
	// so it is reported as what it is rather than as a second terminal.
	denied := -1
	for _, t := range o.terminals {
		if c.recs[t].RecordType == governance.OperationDenied && denied < 0 {
			denied = t
		}
		if isCallable(c.recs[t].RecordType) && denied >= 0 {
			return refuse(governance.RuleDenyThenCall, "", c.recs[t].RecordID.String(), fmt.Sprintf("operation %s has a callable terminal after its OPERATION_DENIED", id))
		}
	}
	switch len(o.terminals) {
	case 0:
		return refuse(governance.RuleTerminal, "", startID, fmt.Sprintf("operation %s has no terminal record: it was authorized and never completed", id))
	case 1:
	default:
		return refuse(governance.RuleTerminal, "", c.recs[o.terminals[1]].RecordID.String(), fmt.Sprintf("operation %s has %d terminal records, want 1", id, len(o.terminals)))
	}
	term := o.terminals[0]
	if term < o.started {
		return refuse(governance.RuleTerminal, "", c.recs[term].RecordID.String(), fmt.Sprintf("operation %s ends before it starts", id))
	}
	tool, _ := c.payloads[o.started].str("tool_id")
	actor := actorOf(c.payloads[o.started])
	for _, g := range o.gates {
		if g < o.started || g > term {
			return refuse(governance.RuleGateCoverage, "", c.recs[g].RecordID.String(), fmt.Sprintf("gate record of operation %s outside the operation", id))
		}
		if err := c.blocking(id, g, term, tool, actor); err != nil {
			return err
		}
	}
	if isCallable(c.recs[term].RecordType) {
		return c.coverage(id, o, term, tool)
	}
	return nil
}

// blocking checks one gate record: a hard deny, or a soft deny no grant
// excuses, must end the operation in OPERATION_DENIED.
func (c *checker) blocking(id uuid.UUID, g, term int, tool string, actor string) error {
	p := c.payloads[g]
	level, _ := p.str("level")
	decision, _ := p.str("decision")
	if decision != string(governance.Deny) {
		return nil
	}
	blocked := false
	if l := governance.GateLevel(level); l == governance.LevelHard || l == governance.LevelSoft {
		grant, ok := p.str("exception_grant_id")
		if !ok {
			blocked = true
		} else if err := c.excused(g, grant, tool, actor, l == governance.LevelHard); err != nil {
			return err
		}
	}
	if blocked && c.recs[term].RecordType != governance.OperationDenied {
		return refuse(governance.RuleDenyThenCall, "", c.recs[term].RecordID.String(), fmt.Sprintf("operation %s reached its callable after a blocking %s deny", id, level))
	}
	return nil
}

// excused checks that the grant a deny names was recorded earlier on the
// chain for this gate, tool and actor, valid when used, used once, and —
// for a hard deny — a break-glass grant.
func (c *checker) excused(g int, grantID, tool, actor string, breakGlass bool) error {
	gate, _ := c.payloads[g].str("gate_id")
	used := c.recs[g].CreatedAt
	fail := func(reason string) error {
		return refuse(governance.RuleException, "", c.recs[g].RecordID.String(), reason)
	}
	for i := 0; i < g; i++ {
		if c.recs[i].RecordType != governance.ExceptionGranted {
			continue
		}
		p := c.payloads[i]
		if id, _ := p.str("grant_id"); id != grantID {
			continue
		}
		gGate, _ := p.str("gate_id")
		gTool, _ := p.str("tool_id")
		issued, _ := p.time("issued_at")
		expires, _ := p.time("expires_at")
		switch {
		case gGate != gate || gTool != tool:
			return fail("exception grant " + grantID + " is for another gate or tool")
		case actorOf(p) != actor || actor == "":
			return fail("exception grant " + grantID + " is for another actor")
		case used.Before(issued) || !used.Before(expires):
			return fail("exception grant " + grantID + " was not valid when used")
		case breakGlass && p.m["break_glass"] != true:
			return fail("a hard deny excused by grant " + grantID + ", which is not a break-glass grant")
		}
		return nil
	}
	return fail("soft deny excused by grant " + grantID + ", which is not recorded before it")
}

// coverage checks that every binding applying to the tool ran before a
// callable terminal, in the phases the controller runs.
func (c *checker) coverage(id uuid.UUID, o *op, term int, tool string) error {
	type key struct{ gate, phase string }
	seen := map[key]int{}
	recheck := false
	for _, g := range o.gates {
		p := c.payloads[g]
		gate, _ := p.str("gate_id")
		phase, _ := p.str("phase")
		seen[key{gate, phase}] = g
		recheck = recheck || phase == "recheck"
	}
	var applicable []governance.ExecutableGateBinding
	for _, b := range c.snap.GateBindings() {
		if b.AppliesTo(tool) {
			applicable = append(applicable, b)
			recheck = recheck || b.Transform()
		}
	}
	termID := c.recs[term].RecordID.String()
	if len(applicable) == 0 {
		return refuse(governance.RuleGateCoverage, "", termID, fmt.Sprintf("operation %s ran tool %q, to which no binding of the policy applies", id, tool))
	}
	for _, b := range applicable {
		phases := []string{"check"}
		if recheck && !b.Transform() {
			phases = append(phases, "recheck")
		}
		for _, phase := range phases {
			g, ok := seen[key{b.GateID(), phase}]
			if !ok {
				return refuse(governance.RuleGateCoverage, "", termID, fmt.Sprintf("operation %s ran with no GATE_EVALUATED of gate %q (phase %s)", id, b.GateID(), phase))
			}
			p := c.payloads[g]
			level, _ := p.str("level")
			module, _ := p.str("module_digest")
			if level != string(b.Level()) || module != b.ModuleDigest() {
				return refuse(governance.RuleGateCoverage, "", c.recs[g].RecordID.String(), fmt.Sprintf("gate record of %q does not match its binding's level or module", b.GateID()))
			}
		}
	}
	for k, g := range seen {
		if !bindingApplies(applicable, k.gate) {
			return refuse(governance.RuleGateCoverage, "", c.recs[g].RecordID.String(), fmt.Sprintf("gate record of %q, which the policy does not bind to tool %q", k.gate, tool))
		}
	}
	return nil
}

func bindingApplies(bs []governance.ExecutableGateBinding, gate string) bool {
	for _, b := range bs {
		if b.GateID() == gate {
			return true
		}
	}
	return false
}

func (c *checker) corrections() error {
	index := map[uuid.UUID]int{}
	for i, r := range c.recs {
		index[r.RecordID] = i
		if r.RecordType != governance.RecordSuperseded {
			if r.SupersedesRecordID.Valid {
				return refuse(governance.RuleCorrection, "", r.RecordID.String(), "only a RECORD_SUPERSEDED may name a superseded record")
			}
			continue
		}
		if !r.SupersedesRecordID.Valid {
			return refuse(governance.RuleCorrection, "", r.RecordID.String(), "RECORD_SUPERSEDED names no record")
		}
		if _, ok := index[r.SupersedesRecordID.UUID]; !ok || r.SupersedesRecordID.UUID == r.RecordID {
			return refuse(governance.RuleCorrection, "", r.RecordID.String(), "RECORD_SUPERSEDED names no earlier record of the chain")
		}
		if err := governance.CheckCorrectionPayload(c.payloads[i].m); err != nil {
			return refuse(governance.RuleCorrection, "", r.RecordID.String(), err.Error())
		}
	}
	return nil
}
