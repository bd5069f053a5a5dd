package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/service"
)

// hook answers one hook event of a coding agent (package hooks): the
// body is the agent's hook input; the answer is the agent's own answer
// body or, with format=command, the command hook's envelope. A refusal is
// the one error body (for Claude Code's HTTP hook with onFailure "block",
// a block).
func (s *Server) hook(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return refuse(codeBodyTooLarge, api.HookTooLargeMessage)
		}
		return refuse(codeMalformedJSON, "reading the hook input: "+err.Error())
	}
	res := s.svc.HandleHook(r.Context(), r.PathValue("agent"), r.URL.Query().Get("event"), body)
	if res.Refused() {
		msg := res.Code
		if res.Err != nil {
			msg = res.Err.Error()
		}
		return refuse(res.Code, msg)
	}
	if strings.EqualFold(r.URL.Query().Get("format"), api.HookCommandFormat) {
		env := api.HookEnvelope{Body: res.Answer.Body, Exit: res.Answer.Exit, Stderr: res.Answer.Stderr}
		if len(env.Body) == 0 {
			env.Body = json.RawMessage("null")
		}
		writeJSON(w, http.StatusOK, env)
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(res.Answer.Body)
	return err
}

// hookSession says where an agent session's evidence and certificate are.
func (s *Server) hookSession(w http.ResponseWriter, r *http.Request) error {
	name, id := r.PathValue("agent"), r.PathValue("session_id")
	agent, ended, chain, ok := s.svc.HookSession(name, id)
	switch {
	case !ok:
		return refuse(string(service.CodeHookUnknownSession), "no session "+id+" of "+name)
	case ended == nil:
		writeJSON(w, http.StatusOK, api.HookSession{Agent: agent, SessionID: id, State: "open", ChainID: chain.String()})
	default:
		writeJSON(w, http.StatusOK, api.HookSession{Agent: agent, SessionID: ended.SessionID, State: "ended", ChainID: chain.String(),
			TaskID: ended.Boundary.TaskBoundaryID.String(), Certificate: ended.Certificate, CertifyError: ended.CertifyError, Unreported: ended.Unreported})
	}
	return nil
}
