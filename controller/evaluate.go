package controller

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/governance"
)

// gateOutcome is one evaluation of one binding.
type gateOutcome struct {
	decision governance.GateDecision
	reason   string
	message  string
	// replaced holds the arguments a transform gate produced.
	replaced *governance.Arguments
	// held says the gate asked for an approval that the operation holds
	// instead of asking (holdApprovals): nothing is decided yet.
	held bool
}

// evaluate runs the applicable bindings once each in snapshot order, then,
// when any of them is a transform, every check binding again on the final
// arguments (ADR-0086 D2's security → user → security as one evaluation
// with two phases). It stops at the first blocking deny, and, for an
// operation that holds its approvals (holdApprovals), where a gate asks
// for one (verdict.held; AwaitingApproval.Finish goes on from there). The
// GATE_EVALUATED records collect in op.precall: the caller appends them
// in one batch before acting on the verdict.
func (op *operation) evaluate(ctx context.Context) verdict {
	return op.evaluateFrom(ctx, abi.PhaseCheck, 0)
}

// evaluateFrom is evaluate from the binding at index from (among the
// applicable ones) of phase on: a held authorization resumes after the
// gate that asked.
func (op *operation) evaluateFrom(ctx context.Context, phase abi.Phase, from int) verdict {
	var small [8]governance.ExecutableGateBinding
	applicable := small[:0]
	hasTransform := false
	for i := range op.snap.NumGateBindings() {
		if b := op.snap.GateBinding(i); b.AppliesTo(op.call.Tool) {
			applicable = append(applicable, b)
			hasTransform = hasTransform || b.Transform()
		}
	}
	if len(applicable) == 0 {
		return verdict{denied: true, reason: ReasonNoGateBinding}
	}
	if phase == abi.PhaseCheck {
		for i := from; i < len(applicable); i++ {
			if v := op.runBinding(ctx, applicable[i], abi.PhaseCheck, i); v.denied || v.held {
				return v
			}
		}
		from = 0
	}
	if !hasTransform && !op.recheck {
		return verdict{}
	}
	for i := from; i < len(applicable); i++ {
		b := applicable[i]
		if b.Transform() {
			continue
		}
		if v := op.runBinding(ctx, b, abi.PhaseRecheck, i); v.denied || v.held {
			return v
		}
	}
	return verdict{}
}

// runBinding evaluates one binding (the index-th applicable one), applies
// its level, adds its GATE_EVALUATED record to op.precall, and says
// whether the operation is blocked, or held before asking for an approval
// (op.awaiting then says where).
func (op *operation) runBinding(ctx context.Context, b governance.ExecutableGateBinding, phase abi.Phase, index int) verdict {
	inDigest := op.args.Digest
	start := time.Now()
	out, approval := op.evaluateGate(ctx, b, phase)
	if out.held {
		w := op.awaiting
		w.binding, w.phase, w.index, w.started, w.inDigest = b, phase, index, start, inDigest
		return verdict{held: true}
	}
	return op.settle(b, phase, inDigest, start, out, approval)
}

// settle applies one binding's outcome: its level and any exception grant,
// a transform's replaced arguments, and its GATE_EVALUATED record (its
// duration from start, an approver's wait included).
func (op *operation) settle(b governance.ExecutableGateBinding, phase abi.Phase, inDigest string, start time.Time, out gateOutcome, approval *governance.GateApproval) verdict {
	rec := governance.GateEvaluatedPayload{
		GateID: b.GateID(), Level: b.Level(), Decision: out.decision, ReasonCode: out.reason,
		Phase: governance.GatePhase(phase), ArgumentDigest: inDigest, ModuleDigest: b.ModuleDigest(),
		DurationMicros: time.Since(start).Microseconds(), Approval: approval,
	}
	blocked := false
	if out.decision == governance.Deny && b.Level() != governance.LevelAdvisory {
		g, found := op.c.exceptions.consume(op.ctx.ChainID, b.Level(), op.ctx.Actor, b.GateID(), op.call.Tool, op.ctx.PolicyID, op.ctx.PolicyVersion, op.c.now())
		switch found {
		case grantUsed:
			rec.ExceptionGrantID = uuid.NullUUID{UUID: g.GrantID, Valid: true}
			rec.BreakGlass = g.BreakGlass
		case grantAmbiguous:
			rec.ExceptionAmbiguous = true
			blocked = true
		default:
			blocked = true
		}
	}
	if !blocked && out.replaced != nil && out.replaced.Digest != inDigest {
		rec.OutputArgumentDigest = out.replaced.Digest
		op.args = *out.replaced
	}
	op.precall = append(op.precall, recordSpec{typ: governance.GateEvaluated, operation: op.opID(), payload: rec.Fields()})
	if blocked {
		return verdict{denied: true, gateID: b.GateID(), reason: out.reason, message: out.message, phase: phase}
	}
	return verdict{}
}

// evaluateGate asks the gate and maps every answer and failure onto the
// binary decision, with what an approval settled (nil when none was asked).
func (op *operation) evaluateGate(ctx context.Context, b governance.ExecutableGateBinding, phase abi.Phase) (gateOutcome, *governance.GateApproval) {
	cwd, facts, err := op.pathFacts()
	if err != nil {
		return gateOutcome{decision: governance.Deny, reason: ReasonEvaluatorError}, nil
	}
	gate, err := op.c.cfg.Gates.GateFor(ctx, b)
	if err != nil {
		return gateOutcome{decision: governance.Deny, reason: ReasonEvaluatorError}, nil
	}
	in := NewGateInput(op.call, op.args, facts, b.GateID(), phase)
	in.Cwd = cwd
	in.Workspace = op.workspace
	chainText, opText := op.idTexts()
	in.Context = operationInfo(op.call, opText, op.gateActor())
	if op.home != nil {
		h := op.home.dutyHistory()
		in.Context.Assignments = &h
	}
	out, err := evaluateIn(ctx, gate, chainText, in)
	if err != nil || ctx.Err() != nil {
		return gateOutcome{decision: governance.Deny, reason: ReasonEvaluatorError}, nil
	}
	switch out.Decision {
	case abi.DecisionAllow:
		res := gateOutcome{decision: governance.Allow, reason: out.ReasonCode}
		if b.Transform() && len(out.Arguments) > 0 {
			next, err := op.args.WithReplacement(out.Arguments)
			if err != nil {
				return gateOutcome{decision: governance.Deny, reason: ReasonEvaluatorError}, nil
			}
			res.replaced = &next
		}
		return res, nil
	case abi.DecisionDeny:
		return gateOutcome{decision: governance.Deny, reason: out.ReasonCode, message: out.Message}, nil
	case abi.DecisionRequireApproval:
		return op.approve(ctx, b, out)
	}
	return gateOutcome{decision: governance.Deny, reason: ReasonEvaluatorError}, nil
}

// approve answers a require_approval: approved earlier for exactly these
// arguments → allow; no callback → deny approval.required; otherwise the
// approval callback is asked (ask), or, for an operation that holds its
// approvals, the operation stops here without asking (gateOutcome.held,
// op.awaiting), to be asked by AwaitingApproval.Finish.
func (op *operation) approve(ctx context.Context, b governance.ExecutableGateBinding, out abi.GateOutput) (gateOutcome, *governance.GateApproval) {
	if op.approvedArgs[b.GateID()] == op.args.Digest {
		// The approver already approved these exact arguments (their own
		// replacement, now rechecked): asking again would ask the same question.
		extra := &governance.GateApproval{GateReasonCode: out.ReasonCode, Outcome: governance.ApprovalApprovedEarlier}
		return gateOutcome{decision: governance.Allow, reason: out.ReasonCode}, extra
	}
	if op.c.cfg.Approvals == nil {
		extra := &governance.GateApproval{GateReasonCode: out.ReasonCode, Outcome: governance.ApprovalUnavailable}
		return gateOutcome{decision: governance.Deny, reason: ReasonApprovalRequired, message: out.Message}, extra
	}
	if op.holdApprovals {
		op.awaiting = &AwaitingApproval{op: op, output: out}
		return gateOutcome{held: true}, nil
	}
	return op.ask(ctx, b, out)
}

// ask consults the approval callback for a require_approval answer:
// approved → allow with the gate's reason code; rejected or failed → deny
// approval.required. Who decided and when is recorded.
func (op *operation) ask(ctx context.Context, b governance.ExecutableGateBinding, out abi.GateOutput) (gateOutcome, *governance.GateApproval) {
	extra := &governance.GateApproval{GateReasonCode: out.ReasonCode}
	denied := gateOutcome{decision: governance.Deny, reason: ReasonApprovalRequired, message: out.Message}
	// NB: an approver may take minutes; the operation's records so far are
	// applied before the wait (and made durable with the rest).
	op.applyPrecall()
	actor, _ := op.ctx.ActorValue()
	req := ApprovalRequest{
		OperationID: op.ctx.OperationID, Tool: op.call.Tool, Operation: op.call.Operation, Action: actionOf(op.args, op.call),
		GateID: b.GateID(), ReasonCode: out.ReasonCode, Message: out.Message,
		RunID: op.call.RunID, AgentName: op.call.AgentName, ToolCallID: op.call.ToolCallID,
		Metadata: copyMetadata(op.call.Metadata), Arguments: json.RawMessage(op.args.Canonical),
		ArgumentDigest: op.args.Digest, MatchedRule: out.MatchedRule, Cwd: op.cwd, PathFacts: op.facts,
	}
	if op.ctx.Actor != nil {
		req.Actor = &actor
	}
	d, err := op.c.cfg.Approvals(ctx, req)
	if err != nil {
		extra.Outcome = governance.ApprovalFailed
		return denied, extra
	}
	decided := d.DecidedAt
	if decided.IsZero() {
		decided = op.c.now()
	}
	extra.DecidedAt = decided
	if d.Approver != nil {
		approver := *d.Approver
		extra.Approver = &approver
	}
	if d.Decision != abi.DecisionAllow {
		extra.Outcome = governance.ApprovalRejected
		denied.message = approvalText(op.call.Tool, out, d)
		return denied, extra
	}
	extra.Outcome = governance.ApprovalApproved
	res := gateOutcome{decision: governance.Allow, reason: out.ReasonCode}
	if len(d.Arguments) > 0 {
		// ADR-0086's escalation rule: an approver may answer with new
		// arguments. Stricter than LionAGI, which ran them unchecked: they
		// replace the call's arguments and every check gate runs again on
		// them (the recheck phase).
		next, err := op.args.WithReplacement(d.Arguments)
		if err != nil {
			extra.Outcome = governance.ApprovalBadArguments
			return denied, extra
		}
		res.replaced = &next
		if op.approvedArgs == nil {
			op.approvedArgs = map[string]string{}
		}
		op.approvedArgs[b.GateID()] = next.Digest
		op.recheck = true
	}
	return res, extra
}

// approvalText is the model-facing text of an approval the approver did
// not grant, as AgentLane's format_tool_permission_result renders the
// callback's decision: its reason when not blank (verbatim); the approval
// text when it answered require_approval again; the deny text otherwise.
func approvalText(tool string, out abi.GateOutput, d ApprovalDecision) string {
	switch {
	case strings.TrimSpace(d.Reason) != "":
		return d.Reason
	case d.Decision == abi.DecisionRequireApproval:
		return out.Message
	case out.DenyMessage != "":
		return out.DenyMessage
	}
	return "permission denied: " + tool + " is not allowed"
}

// pathFacts resolves the cwd and the current arguments' path facts once per
// argument version. Without a resolver, gates see the cwd as given and no
// facts.
func (op *operation) pathFacts() (string, []abi.PathFact, error) {
	if op.c.cfg.PathFacts == nil {
		return op.call.Cwd, nil, nil
	}
	if op.factsOf != op.args.Digest {
		op.cwd, op.facts, op.factsError = op.c.cfg.PathFacts(op.call.Cwd, op.args.Value, op.args.Order, op.call.PathArgs)
		op.factsOf = op.args.Digest
	}
	return op.cwd, op.facts, op.factsError
}
