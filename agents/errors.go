package agents

import (
	"errors"
	"fmt"
)

// ErrMalformed matches every payload that cannot be read as the agent's
// hook input: not one JSON object, a field of the wrong type.
var ErrMalformed = errors.New("agents: malformed hook input")

// ErrMissingField matches a payload without a field its event needs.
var ErrMissingField = errors.New("agents: hook input is missing a field")

// ErrUnknownAgent matches an agent name with no dialect.
var ErrUnknownAgent = errors.New("agents: unknown agent")

// MalformedError says why a payload is malformed.
type MalformedError struct {
	Agent  Agent
	Reason string
}

func (e *MalformedError) Error() string {
	return fmt.Sprintf("agents: malformed %s hook input: %s", e.Agent, e.Reason)
}

// Is matches ErrMalformed.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

// MissingFieldError names the field a payload lacks.
type MissingFieldError struct {
	Agent Agent
	Event string
	Field string
}

func (e *MissingFieldError) Error() string {
	if e.Event == "" {
		return fmt.Sprintf("agents: %s hook input has no %s", e.Agent, e.Field)
	}
	return fmt.Sprintf("agents: %s %s hook input has no %s", e.Agent, e.Event, e.Field)
}

// Is matches ErrMissingField.
func (e *MissingFieldError) Is(target error) bool { return target == ErrMissingField }

// UnknownAgentError names an agent with no dialect.
type UnknownAgentError struct{ Agent string }

func (e *UnknownAgentError) Error() string {
	return fmt.Sprintf("agents: unknown agent %q (known: claude, codex, cursor, copilot, gemini)", e.Agent)
}

// Is matches ErrUnknownAgent.
func (e *UnknownAgentError) Is(target error) bool { return target == ErrUnknownAgent }
