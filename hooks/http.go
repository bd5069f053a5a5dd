package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/governance"
)

// MaxBody bounds a hook input as read: post-tool events carry a tool's
// whole result (a Read of a large file). The tool input inside a pre-tool
// event has its own, smaller bound, the one every front end shares:
// abi.MaxArgumentsBytes (the controller denies a larger call,
// request.too_large, before any gate runs).
const MaxBody = 8 << 20

// TooLargeMessage says that a hook input exceeds MaxBody.
var TooLargeMessage = fmt.Sprintf("hook input over %d MiB", MaxBody>>20)

// CommandFormat is the query value (format=command) asking for the
// command hook's envelope instead of the agent's answer body.
const CommandFormat = "command"

// Envelope is the answer for a command hook: what to print on stdout, the
// exit status and stderr. Body is the agent's answer object, or null for
// no output.
type Envelope struct {
	Body   json.RawMessage `json:"body"`
	Exit   int             `json:"exit"`
	Stderr string          `json:"stderr,omitempty"`
}

// ErrorBody is the stable error body of a refused hook request.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Handler serves the hook endpoints (authentication is the caller's):
//
//	POST /v1/hooks/claude-code          Claude Code's HTTP hook
//	POST /v1/hooks/{agent}[?event=NAME] any agent (claude, codex, gemini, cursor, copilot)
//
// The body is the agent's hook input; the answer is the agent's own
// answer body, or with format=command the command hook's Envelope. A
// refused request answers a non-2xx status with ErrorBody (for Claude
// Code's HTTP hook with onFailure "block", a block).
func Handler(s *Service) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/hooks/{agent}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("agent")
		agent := agents.Agent(name)
		if name == "claude-code" {
			agent = agents.Claude
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, http.StatusRequestEntityTooLarge, "hook.too_large", TooLargeMessage)
				return
			}
			writeError(w, http.StatusBadRequest, "hook.unreadable", err.Error())
			return
		}
		res := s.Handle(r.Context(), agent, r.URL.Query().Get("event"), body)
		if res.Status != http.StatusOK {
			msg := res.Code
			if res.Err != nil {
				msg = res.Err.Error()
			}
			writeError(w, res.Status, res.Code, msg)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.EqualFold(r.URL.Query().Get("format"), CommandFormat) {
			env := Envelope{Body: res.Answer.Body, Exit: res.Answer.Exit, Stderr: res.Answer.Stderr}
			if len(env.Body) == 0 {
				env.Body = json.RawMessage("null")
			}
			_ = json.NewEncoder(w).Encode(env)
			return
		}
		_, _ = w.Write(res.Answer.Body)
	})
	mux.HandleFunc("GET /v1/hooks/{agent}/sessions/{session_id}", func(w http.ResponseWriter, r *http.Request) {
		agent := agents.Agent(r.PathValue("agent"))
		if agent == "claude-code" {
			agent = agents.Claude
		}
		ended, ok := s.Session(agent, r.PathValue("session_id"))
		if !ok {
			if chain, open := s.ChainOf(agent, r.PathValue("session_id")); open {
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(SessionBody{Agent: string(agent), SessionID: r.PathValue("session_id"), State: "open", ChainID: chain.String()})
				return
			}
			writeError(w, http.StatusNotFound, "hook.unknown_session", "no session "+r.PathValue("session_id")+" of "+string(agent))
			return
		}
		body := SessionBody{Agent: string(agent), SessionID: ended.SessionID, State: "ended", ChainID: ended.Boundary.ChainID.String(),
			TaskID: ended.Boundary.TaskBoundaryID.String(), Certificate: ended.Certificate, CertifyError: ended.CertifyError, Unreported: ended.Unreported}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	})
	return mux
}

// SessionBody answers GET /v1/hooks/{agent}/sessions/{session}: where an
// agent session's evidence and certificate are.
type SessionBody struct {
	Agent        string                      `json:"agent"`
	SessionID    string                      `json:"session_id"`
	State        string                      `json:"state"` // "open" or "ended"
	ChainID      string                      `json:"chain_id"`
	TaskID       string                      `json:"task_id,omitempty"`
	Certificate  *governance.TaskCertificate `json:"certificate,omitempty"`
	CertifyError string                      `json:"certify_error,omitempty"`
	Unreported   int                         `json:"unreported,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	var b ErrorBody
	b.Error.Code, b.Error.Message = code, message
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(b)
}
