package api

import (
	"encoding/json"

	"github.com/govhost/govhost/governance"
)

// MaxHookBody bounds a hook input as read, POST /v1/hooks/{agent}:
// post-tool events carry a tool's whole result (a Read of a large file).
// The tool input inside a pre-tool event has its own, smaller bound, the
// one every front end shares: abi.MaxArgumentsBytes (the controller denies
// a larger call, request.too_large, before any gate runs).
const MaxHookBody = 8 << 20

// HookTooLargeMessage says that a hook input exceeds MaxHookBody.
const HookTooLargeMessage = "hook input over 8 MiB"

// HookCommandFormat is the query value (format=command) asking POST
// /v1/hooks/{agent} for the command hook's HookEnvelope instead of the
// agent's own answer body.
const HookCommandFormat = "command"

// HookEnvelope is the answer for a command hook (govhost-hook): what to
// print on stdout, the exit status and stderr. Body is the agent's answer
// object, or null for no output.
type HookEnvelope struct {
	Body   json.RawMessage `json:"body"`
	Exit   int             `json:"exit"`
	Stderr string          `json:"stderr,omitempty"`
}

// HookSession answers GET /v1/hooks/{agent}/sessions/{session_id}: where
// an agent session's evidence and certificate are.
type HookSession struct {
	Agent        string                      `json:"agent"`
	SessionID    string                      `json:"session_id"`
	State        string                      `json:"state"` // "open" or "ended"
	ChainID      string                      `json:"chain_id"`
	TaskID       string                      `json:"task_id,omitempty"`
	Certificate  *governance.TaskCertificate `json:"certificate,omitempty"`
	CertifyError string                      `json:"certify_error,omitempty"`
	Unreported   int                         `json:"unreported,omitempty"`
}
