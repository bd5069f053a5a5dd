package hooks

import (
	"context"
	"errors"
	"strings"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// Reason codes of the refusals the hook layer answers itself; they are
// not gate verdicts and nothing is appended for them.
const (
	ReasonReplayedToolUse = "hook.replayed_tool_use_id"
	ReasonRewritten       = "hook.arguments_rewritten"
)

// pre authorizes every governed call of a pre-tool event; the tool may
// run only if every one is allowed.
func (s *Service) pre(ctx context.Context, d *agents.Dialect, ev agents.Event) Result {
	calls, err := d.Request(ev, s.cfg.Facts)
	if err != nil {
		return refused(CodeUntranslatable, err, ev)
	}
	sess, err := s.open(ctx, ev)
	if err != nil {
		return refused(CodeTaskOpenFailed, err, ev)
	}
	key, err := d.CorrelationKey(ev, calls)
	if err != nil {
		return refused(CodeUntranslatable, err, ev)
	}
	if err := sess.pending.Claim(key); err != nil {
		v := agents.Verdict{Decision: agents.Deny, ReasonCode: ReasonReplayedToolUse,
			Message: "govhost refused this tool call: its tool_use_id " + ev.ToolUseID + " was already authorized in this session, and a call is authorized once"}
		return s.verdict(d, ev, v)
	}
	askCtx, delegated := ctx, (*asked)(nil)
	if s.cfg.Approval == ApprovalAsk && d.CanAsk {
		askCtx, delegated = withAsk(ctx)
	}
	permits := make([]controller.Permit, 0, len(calls))
	for _, r := range calls {
		p, err := sess.task.Authorize(askCtx, callOf(r))
		if err != nil {
			s.abandon(ctx, sess, permits, "not_run")
			var denied *governance.GovernanceDeniedError
			if errors.As(err, &denied) {
				msg := denied.Message
				if msg == "" {
					// Some denials carry no gate message (policy.no_gate_binding):
					// the model and the person still need a reason.
					msg = "govhost denied this " + ev.ToolName + " call (" + denied.ReasonCode + ")"
				}
				return s.verdict(d, ev, agents.Verdict{Decision: agents.Deny, ReasonCode: denied.ReasonCode, Message: msg})
			}
			return refused(CodeAuthorizeFail, err, ev)
		}
		permits = append(permits, p)
		if p.Rewritten {
			// A transform or an approver replaced the arguments; the agent
			// would run its own. Refuse rather than run what was not
			// governed.
			s.abandon(ctx, sess, permits, "not_run")
			return s.verdict(d, ev, agents.Verdict{Decision: agents.Deny, ReasonCode: ReasonRewritten,
				Message: "govhost refused this tool call: a gate rewrote its arguments, and " + string(d.Agent) + " would run the original ones"})
		}
	}
	sess.pending.Hold(key, permits)
	v := agents.Verdict{Decision: agents.Allow}
	if delegated != nil && delegated.delegated {
		v = agents.Verdict{Decision: agents.Ask, ReasonCode: delegated.reason, Message: delegated.message}
		if v.Message == "" {
			v.Message = "govhost: this " + ev.ToolName + " call requires approval"
		}
	}
	return s.verdict(d, ev, v)
}

func (s *Service) verdict(d *agents.Dialect, ev agents.Event, v agents.Verdict) Result {
	return Result{Answer: d.Answer(ev, v, agents.AnswerOptions{ExplicitAllow: s.cfg.ExplicitAllow}), Event: ev, Verdict: &v}
}

// callOf is the controller's call of an agent's request: the arguments
// go as agents parsed them (Call.Parsed), so the controller neither
// decodes nor hashes them again.
func callOf(r agents.Request) controller.Call {
	return controller.Call{Tool: r.Tool, Operation: r.Operation, Arguments: r.Arguments.Canonical, Parsed: &r.Arguments,
		Cwd: r.Cwd, RunID: r.RunID, AgentName: r.AgentName, ToolCallID: r.ToolCallID, Metadata: r.Metadata}
}

// abandon completes, as failed with class, permits of calls that will not
// run, so the task can still be certified.
func (s *Service) abandon(ctx context.Context, sess *session, permits []controller.Permit, class string) int {
	n := 0
	for _, p := range permits {
		if s.cfg.Controller.Complete(ctx, p.ID, controller.Outcome{TaskBoundaryID: p.TaskBoundaryID, Failed: true, ErrorClass: class}) == nil {
			n++
		}
	}
	return n
}

// post completes the permits of the call a post-tool event reports.
func (s *Service) post(ctx context.Context, d *agents.Dialect, ev agents.Event) Result {
	sess, err := s.find(ctx, ev)
	if err != nil {
		return refused(CodeTaskOpenFailed, err, ev)
	}
	if sess == nil {
		return refused(CodeNoPendingCall, agents.ErrNoPending, ev)
	}
	key, err := d.CorrelationKey(ev, nil)
	if err != nil {
		return refused(CodeUntranslatable, err, ev)
	}
	permits, err := sess.pending.Take(key)
	if err != nil {
		if sess.lost.Add(-1) >= 0 {
			// A call authorized before the restart: its outcome is on the
			// chain already (controller.FailureOutcomeLost).
			return Result{Answer: d.NoOpinion(), Event: ev}
		}
		sess.lost.Add(1)
		return refused(CodeNoPendingCall, err, ev)
	}
	out := controller.Outcome{ResultDigest: agents.ResponseDigest(ev)}
	if ev.Kind != agents.KindPostTool {
		out.Failed, out.ErrorClass, out.ResultDigest = true, ev.FailureClass, ""
	}
	for _, p := range permits {
		o := out
		o.TaskBoundaryID = p.TaskBoundaryID
		if err := s.cfg.Controller.Complete(ctx, p.ID, o); err != nil {
			var pe *controller.PermitError
			if errors.As(err, &pe) {
				return refused(CodePermitRefused, err, ev)
			}
			return refused(CodeCompleteFail, err, ev)
		}
	}
	return Result{Answer: d.NoOpinion(), Event: ev}
}

// end closes the session's task and certifies it. Calls the agent never
// reported are completed as failed ("no_outcome") first.
func (s *Service) end(ctx context.Context, d *agents.Dialect, ev agents.Event) Result {
	key := sessionKey(ev)
	if _, err := s.find(ctx, ev); err != nil {
		return refused(CodeTaskOpenFailed, err, ev)
	}
	s.mu.Lock()
	sess := s.sessions[key]
	delete(s.sessions, key)
	s.mu.Unlock()
	if sess == nil || sess.task == nil {
		return Result{Answer: d.NoOpinion(), Event: ev}
	}
	ended := &Ended{Agent: ev.Agent, SessionID: ev.SessionID}
	for _, permits := range sess.pending.Drain() {
		ended.Unreported += s.abandon(ctx, sess, permits, "no_outcome")
	}
	boundary, err := sess.task.Close(ctx)
	if err != nil {
		return refused(CodeTaskCloseFail, err, ev)
	}
	ended.Boundary = boundary
	if s.cfg.Head != nil {
		ended.Head, _ = s.cfg.Head(ctx, boundary.ChainID)
	}
	if s.cfg.Certify != nil {
		cert, err := s.cfg.Certify(ctx, boundary)
		if err != nil {
			ended.CertifyError = err.Error()
		} else {
			ended.Certificate = &cert
		}
	}
	s.forget(ctx, ev)
	s.mu.Lock()
	s.ended[key] = ended
	s.mu.Unlock()
	return Result{Answer: d.Notice(ended.Notice(s.cfg.Sidecar)), Event: ev, Ended: ended}
}

// Notice tells the user where the session's proof is, with the commands
// that check it, working as printed while the server runs: the chain is
// exported through the server (the data directory is locked while it
// runs) and verified against the certified head.
func (e *Ended) Notice(sc Sidecar) string {
	chain := e.Boundary.ChainID.String()
	head := e.Head
	if e.Certificate != nil {
		head = e.Certificate.EvidenceChainHead
	}
	file := "chain-" + chain + ".jsonl"
	export := "govhost chain export --chain " + chain + " --out " + file
	if sc.URL != "" {
		export = "govhost chain export --addr " + sc.URL
		if sc.TokenFile != "" {
			export += " --token-file " + shellWord(sc.TokenFile)
		}
		export += " --chain " + chain + " --out " + file
	}
	check := "; check it: " + export
	if head != "" {
		check += " && govhost chain verify --file " + file + " --expected-head " + head
	}
	if e.Certificate == nil {
		return "govhost: session closed, task " + e.Boundary.TaskBoundaryID.String() + ", chain " + chain + "; no certificate (" + e.CertifyError + ")" + check
	}
	return "govhost: session certified " + string(e.Certificate.ProcessGrade) + ", certificate " + e.Certificate.CertificateID.String() +
		", task " + e.Boundary.TaskBoundaryID.String() + ", chain " + chain + check
}

// shellWord quotes a path for sh when it needs it.
func shellWord(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
