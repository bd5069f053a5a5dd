package agents

import (
	"encoding/json"
)

// Decision is govhost's answer to a tool call, before it is put in an
// agent's words.
type Decision string

const (
	// Allow: every gate allowed (or an approver approved).
	Allow Decision = "allow"
	// Deny: a gate denied; Message is its model-facing message.
	Deny Decision = "deny"
	// Ask: a gate requires approval and the configuration lets the
	// agent's own prompt ask the person.
	Ask Decision = "ask"
)

// Verdict is the decision on one tool call.
type Verdict struct {
	Decision   Decision
	ReasonCode string
	// Message is the gate's model-facing message (deny) or the question
	// for the person (ask).
	Message string
}

// Answer is a verdict in an agent's words.
type Answer struct {
	// Body is the command hook's stdout, or the HTTP hook's response body.
	Body []byte
	// Exit is the command hook's exit status.
	Exit int
	// Stderr is the command hook's stderr (the block reason where exit
	// status 2 blocks).
	Stderr string
	// Blocks reports that the answer stops the tool call.
	Blocks bool
}

// AnswerStyle is how an agent reads a pre-tool decision.
type AnswerStyle int

const (
	// StyleHookSpecific: Claude Code and Codex,
	// {"hookSpecificOutput":{"hookEventName","permissionDecision","permissionDecisionReason"}}.
	StyleHookSpecific AnswerStyle = iota
	// StyleDecision: Gemini CLI, {"decision":"allow"|"deny","reason"}.
	StyleDecision
	// StylePermission: Cursor, {"permission","user_message","agent_message"}.
	StylePermission
	// StyleFlat: Copilot CLI, {"permissionDecision","permissionDecisionReason"}.
	StyleFlat
)

// AnswerOptions are the configuration choices of the issue.
type AnswerOptions struct {
	// ExplicitAllow answers an allow with the agent's "allow" (which in
	// Claude Code skips its permission prompt) instead of no opinion
	// ({}), which leaves the agent's own permission rules in force. The
	// default is no opinion; agents without an explicit allow always get
	// no opinion.
	ExplicitAllow bool
}

var noOpinion = []byte("{}")

// NoOpinion is the answer that lets the agent proceed unchanged: {} on
// exit status 0. It answers every event that is not a pre-tool decision.
func (d *Dialect) NoOpinion() Answer { return Answer{Body: noOpinion} }

// Notice is no opinion carrying a message for the user, where the agent
// shows one (SystemMessage); else plain no opinion.
func (d *Dialect) Notice(message string) Answer {
	if !d.SystemMessage || message == "" {
		return d.NoOpinion()
	}
	out, _ := json.Marshal(struct {
		SystemMessage string `json:"systemMessage"`
	}{message})
	return Answer{Body: out}
}

// Answer puts a verdict on a pre-tool event in the agent's words. An Ask
// for an agent that cannot ask (CanAsk false) is answered as a deny with
// the approval message: hold the call on the approval broker instead when
// the person should decide.
func (d *Dialect) Answer(ev Event, v Verdict, opt AnswerOptions) Answer {
	if ev.Kind != KindPreTool {
		return d.NoOpinion()
	}
	decision := v.Decision
	if decision == Ask && !d.CanAsk {
		decision = Deny
	}
	switch decision {
	case Allow:
		if !opt.ExplicitAllow || !d.ExplicitAllow {
			return d.NoOpinion()
		}
		return Answer{Body: d.render(ev, Allow, v.Message)}
	case Ask:
		return Answer{Body: d.render(ev, Ask, v.Message)}
	default:
		return d.block(ev, v.Message)
	}
}

// block is a deny in the agent's words, with its blocking exit status.
func (d *Dialect) block(ev Event, message string) Answer {
	a := Answer{Body: d.render(ev, Deny, message), Exit: d.BlockExit, Blocks: true}
	if d.BlockExit != 0 {
		a.Stderr = message
	}
	return a
}

// UnavailableMessage is what the agent shows when the gate cannot answer:
// it says the gate is unavailable, never that the policy denied the call.
func UnavailableMessage(cause string) string {
	return "govhost gate unavailable (" + cause + "): the tool call is blocked because the governance sidecar could not decide; this is not a policy decision"
}

// Unavailable is the command hook's answer when the sidecar cannot answer
// (down, timeout, bad answer). A pre-tool event is blocked; any other
// event gets a non-blocking error (exit status 1, the message on stderr)
// that says what happened — nothing was blocked, the event went
// unrecorded: blocking a Stop would keep the agent from stopping, and a
// tool that already ran cannot be stopped.
func (d *Dialect) Unavailable(ev Event, cause string) Answer {
	if ev.Kind != KindPreTool {
		return Answer{Exit: 1, Stderr: UnrecordedMessage(ev, cause)}
	}
	msg := UnavailableMessage(cause)
	a := d.block(ev, msg)
	a.Stderr = msg
	return a
}

// UnrecordedMessage is what the agent shows when the sidecar could not
// take an event other than a pre-tool one: what went unrecorded, and that
// nothing was blocked.
func UnrecordedMessage(ev Event, cause string) string {
	name := ev.Name
	if name == "" {
		name = "hook"
	}
	switch ev.Kind {
	case KindPostTool, KindToolFailed, KindToolNotRun:
		return "govhost could not record the outcome of this tool call (" + cause + "): the call was not blocked, and the session's evidence lacks its outcome (" + name + ")"
	}
	return "govhost could not record the " + name + " event (" + cause + "); nothing was blocked, the event is not in the session's evidence"
}

func (d *Dialect) render(ev Event, decision Decision, message string) []byte {
	var v any
	switch d.Style {
	case StyleDecision:
		v = decisionAnswer{Decision: string(decision), Reason: message}
	case StylePermission:
		a := permissionAnswer{Permission: string(decision)}
		if decision != Allow {
			a.UserMessage = message
			if decision == Deny {
				a.AgentMessage = message
			}
		}
		v = a
	case StyleFlat:
		v = flatAnswer{PermissionDecision: string(decision), PermissionDecisionReason: message}
	default:
		v = hookSpecificAnswer{HookSpecificOutput: hookSpecificOutput{
			HookEventName: ev.Name, PermissionDecision: string(decision), PermissionDecisionReason: message,
		}}
	}
	out, _ := json.Marshal(v) // plain structs of strings: cannot fail
	return out
}

type hookSpecificAnswer struct {
	HookSpecificOutput hookSpecificOutput `json:"hookSpecificOutput"`
}

type hookSpecificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

type decisionAnswer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

type permissionAnswer struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

type flatAnswer struct {
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}
