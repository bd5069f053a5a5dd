package certify

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// op is what one operation's records say, as indexes into the chain.
type op struct {
	started   int // OPERATION_STARTED, -1 if none
	terminals []int
	gates     []int // GATE_EVALUATED, in chain order
}

// operations groups the records by operation, recounts the gate summary,
// and checks every operation.
func (c *checker) operations() error {
	ops := map[uuid.UUID]*op{}
	grantsUsed := map[uuid.UUID]bool{}
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
			g := c.gate[i]
			c.summary.Add(g.Level, g.Decision)
			if g.ExceptionGrantID.Valid {
				if grantsUsed[g.ExceptionGrantID.UUID] {
					return refuse(governance.RuleException, "", r.RecordID.String(), "exception grant "+g.ExceptionGrantID.UUID.String()+" used twice")
				}
				grantsUsed[g.ExceptionGrantID.UUID] = true
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

// operation checks one operation: one start, exactly one terminal after
// it, and between them exactly the gate records the controller writes.
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
	start := c.payloads[o.started]
	tool, _ := start.str("tool_id")
	if t, _ := c.payloads[term].str("tool_id"); t != tool {
		return refuse(governance.RuleTerminal, "", c.recs[term].RecordID.String(), fmt.Sprintf("operation %s started tool %q and ends tool %q", id, tool, t))
	}
	for _, g := range o.gates {
		if g < o.started || g > term {
			return refuse(governance.RuleGateCoverage, "", c.recs[g].RecordID.String(), fmt.Sprintf("gate record of operation %s outside the operation", id))
		}
	}
	args, _ := start.str("argument_digest")
	s := sequence{c: c, id: id, o: o, term: term, tool: tool, actor: actorOf(start), args: args}
	return s.check()
}

// sequence replays the controller's gate sequence (controller.evaluate)
// over one operation's records: the applicable bindings in snapshot order
// (phase check); then, when a transform applies or an approver replaced
// the arguments, every check binding again (phase recheck); stopping at
// the first blocking deny, which OPERATION_DENIED must name.
type sequence struct {
	c     *checker
	id    uuid.UUID
	o     *op
	term  int
	tool  string
	actor string
	args  string // the arguments' digest as the next gate must see them
	next  int    // the next of o.gates to consume
}

func (s *sequence) fail(rule governance.CertificateRule, at int, format string, a ...any) error {
	return refuse(rule, "", s.c.recs[at].RecordID.String(), fmt.Sprintf("operation %s: ", s.id)+fmt.Sprintf(format, a...))
}

func (s *sequence) check() error {
	c := s.c
	termRec := c.recs[s.term]
	var applicable []governance.ExecutableGateBinding
	transform := false
	for _, b := range c.snap.GateBindings() {
		if b.AppliesTo(s.tool) {
			applicable = append(applicable, b)
			transform = transform || b.Transform()
		}
	}
	if termRec.RecordType == governance.OperationDenied {
		if gate, _ := c.payloads[s.term].str("gate_id"); gate == "" {
			return s.deniedBeforeGates(applicable)
		}
	}
	if len(applicable) == 0 {
		if len(s.o.gates) > 0 {
			return s.fail(governance.RuleGateCoverage, s.o.gates[0], "gate record of %q, but no binding of the policy applies to tool %q", c.gate[s.o.gates[0]].GateID, s.tool)
		}
		return s.fail(governance.RuleGateCoverage, s.term, "ran tool %q, to which no binding of the policy applies", s.tool)
	}
	approved := false
	for _, b := range applicable {
		blocked, err := s.expect(b, governance.PhaseCheck)
		if err != nil || blocked {
			return err
		}
		g := c.gate[s.o.gates[s.next-1]]
		if g.Approval != nil && g.Approval.Outcome == governance.ApprovalApproved {
			approved = true
		}
	}
	// A recheck runs when a transform applies; an approver's replacement
	// arguments also start one (recorded as output_argument_digest unless
	// they equal the arguments asked about, so a recheck after an approval
	// is allowed even without it).
	recheck := transform
	if s.next < len(s.o.gates) && approved {
		recheck = true
	}
	if recheck {
		for _, b := range applicable {
			if b.Transform() {
				continue
			}
			blocked, err := s.expect(b, governance.PhaseRecheck)
			if err != nil || blocked {
				return err
			}
		}
	}
	if s.next < len(s.o.gates) {
		g := s.o.gates[s.next]
		return s.fail(governance.RuleGateCoverage, g, "gate record of %q (phase %s) beyond the bindings that apply to tool %q, each once per phase", c.gate[g].GateID, c.gate[g].Phase, s.tool)
	}
	switch {
	case termRec.RecordType == governance.OperationDenied:
		return s.fail(governance.RuleDenyThenCall, s.term, "OPERATION_DENIED names gate %q, but no gate blocked", s.gateNamed())
	case !isCallable(termRec.RecordType):
		return nil
	}
	if d, _ := c.payloads[s.term].str("argument_digest"); d != s.args {
		return s.fail(governance.RuleGateCoverage, s.term, "the callable ran arguments %s, the gates passed on %s", d, s.args)
	}
	return nil
}

func (s *sequence) gateNamed() string {
	g, _ := s.c.payloads[s.term].str("gate_id")
	return g
}

// deniedBeforeGates checks an operation denied before any gate ran: for no
// applicable binding (then none may apply), or because its policy pin
// failed; either way no gate record.
func (s *sequence) deniedBeforeGates(applicable []governance.ExecutableGateBinding) error {
	if len(s.o.gates) > 0 {
		g := s.o.gates[0]
		return s.fail(governance.RuleGateCoverage, g, "gate record of %q in an operation denied before any gate ran", s.c.gate[g].GateID)
	}
	reason, _ := s.c.payloads[s.term].str("reason_code")
	if reason == ReasonNoGateBinding && len(applicable) > 0 {
		return s.fail(governance.RuleGateCoverage, s.term, "denied %s, but %d bindings of the policy apply to tool %q", ReasonNoGateBinding, len(applicable), s.tool)
	}
	return nil
}

// ReasonNoGateBinding is the OPERATION_DENIED reason of a tool no binding
// applies to (the controller's ReasonNoGateBinding).
const ReasonNoGateBinding = "policy.no_gate_binding"

// expect consumes the next gate record as binding b's in phase, and says
// whether it blocked the operation (which then must end there, denied by
// that gate).
func (s *sequence) expect(b governance.ExecutableGateBinding, phase governance.GatePhase) (bool, error) {
	c := s.c
	if s.next >= len(s.o.gates) {
		if c.recs[s.term].RecordType == governance.OperationDenied {
			return false, s.fail(governance.RuleDenyThenCall, s.term, "OPERATION_DENIED names gate %q, but no gate record blocked before it; gate %q (phase %s) has no record", s.gateNamed(), b.GateID(), phase)
		}
		return false, s.fail(governance.RuleGateCoverage, s.term, "ran with no GATE_EVALUATED of gate %q (phase %s)", b.GateID(), phase)
	}
	at := s.o.gates[s.next]
	s.next++
	g := c.gate[at]
	switch {
	case g.GateID != b.GateID() || g.Phase != phase:
		return false, s.fail(governance.RuleGateCoverage, at, "gate record of %q (phase %s) where the policy's order requires %q (phase %s)", g.GateID, g.Phase, b.GateID(), phase)
	case g.Level != b.Level() || g.ModuleDigest != b.ModuleDigest():
		return false, s.fail(governance.RuleGateCoverage, at, "gate record of %q does not match its binding's level or module", b.GateID())
	case g.ArgumentDigest != s.args:
		return false, s.fail(governance.RuleGateCoverage, at, "gate %q saw arguments %s, the operation had %s", b.GateID(), g.ArgumentDigest, s.args)
	case g.OutputArgumentDigest != "" && !b.Transform() && (g.Approval == nil || g.Approval.Outcome != governance.ApprovalApproved):
		return false, s.fail(governance.RuleGateCoverage, at, "gate %q replaced the arguments, but it is no transform and no approver answered", b.GateID())
	}
	blocked := false
	if g.Decision == governance.Deny && g.Level != governance.LevelAdvisory {
		if g.ExceptionGrantID.Valid {
			if err := c.excused(at, g, s.tool, s.actor); err != nil {
				return false, err
			}
		} else {
			blocked = true
		}
	}
	if !blocked {
		if g.OutputArgumentDigest != "" {
			s.args = g.OutputArgumentDigest
		}
		return false, nil
	}
	term := c.recs[s.term]
	if term.RecordType != governance.OperationDenied {
		return true, s.fail(governance.RuleDenyThenCall, s.term, "reached its callable after a blocking %s deny by %q", g.Level, g.GateID)
	}
	if s.next < len(s.o.gates) {
		return true, s.fail(governance.RuleGateCoverage, s.o.gates[s.next], "gate record after the blocking %s deny by %q", g.Level, g.GateID)
	}
	p := c.payloads[s.term]
	gate, _ := p.str("gate_id")
	ph, _ := p.str("phase")
	reason, _ := p.str("reason_code")
	if gate != g.GateID || ph != string(g.Phase) || reason != g.ReasonCode {
		return true, s.fail(governance.RuleDenyThenCall, s.term, "OPERATION_DENIED names gate %q (phase %s, %s), the blocking deny was %q's (phase %s, %s)", gate, ph, reason, g.GateID, g.Phase, g.ReasonCode)
	}
	return true, nil
}

// excused checks that the grant a deny names was recorded earlier on the
// chain for this gate, tool and actor, valid when used, and — for a hard
// deny — a break-glass grant.
func (c *checker) excused(at int, g governance.GateEvaluatedPayload, tool, actor string) error {
	grantID := g.ExceptionGrantID.UUID.String()
	used := c.recs[at].CreatedAt
	fail := func(reason string) error {
		return refuse(governance.RuleException, "", c.recs[at].RecordID.String(), reason)
	}
	for i := 0; i < at; i++ {
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
		breakGlass := p.m["break_glass"] == true
		switch {
		case gGate != g.GateID || gTool != tool:
			return fail("exception grant " + grantID + " is for another gate or tool")
		case actorOf(p) != actor || actor == "":
			return fail("exception grant " + grantID + " is for another actor")
		case used.Before(issued) || !used.Before(expires):
			return fail("exception grant " + grantID + " was not valid when used")
		case g.Level == governance.LevelHard && !breakGlass:
			return fail("a hard deny excused by grant " + grantID + ", which is not a break-glass grant")
		case g.BreakGlass != breakGlass:
			return fail("the gate record's break_glass differs from grant " + grantID + "'s")
		}
		return nil
	}
	return fail("deny excused by grant " + grantID + ", which is not recorded before it")
}
