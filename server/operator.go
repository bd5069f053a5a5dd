package server

import (
	"bytes"
	"net/http"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/server/wire"
	"github.com/govhost/govhost/service"
)

func (s *Server) listPolicies(w http.ResponseWriter, r *http.Request) error {
	list, err := s.svc.ListPolicies(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.PolicyList{Policies: wire.PolicySummaries(list)})
	return nil
}

func (s *Server) policyVersions(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "policy_id")
	if err != nil {
		return err
	}
	list, err := s.svc.PolicyVersions(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.PolicyList{Policies: wire.PolicySummaries(list)})
	return nil
}

// bundle answers a closed task's bundle: JSON (default) or, with
// ?format=tar, the bundle folder as a tar archive; ?checkpoint=1 adds the
// signed checkpoint of the certified head.
func (s *Server) bundle(w http.ResponseWriter, r *http.Request) error {
	task, err := pathID(r, "task_id")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	withCheckpoint := false
	switch q.Get("checkpoint") {
	case "", "0", "false":
	case "1", "true":
		withCheckpoint = true
	default:
		return refuse(string(service.CodeInvalidRequest), "checkpoint must be 1 or 0")
	}
	switch q.Get("format") {
	case "", "json":
		b, err := s.svc.Bundle(r.Context(), task, withCheckpoint)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, wire.Bundle(b))
		return nil
	case "tar":
		// Buffered, so that a refusal is still a proper error body.
		var buf bytes.Buffer
		if err := s.svc.BundleTar(r.Context(), task, withCheckpoint, &buf); err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/x-tar")
		w.Header().Set("Content-Disposition", `attachment; filename="bundle-`+task.String()+`.tar"`)
		w.WriteHeader(http.StatusOK)
		_, err = w.Write(buf.Bytes())
		return err
	default:
		return refuse(string(service.CodeInvalidRequest), "format must be json or tar")
	}
}

func (s *Server) signCheckpoint(w http.ResponseWriter, r *http.Request) error {
	var req api.CheckpointRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	chain, err := bodyID("chain_id", req.ChainID)
	if err != nil {
		return err
	}
	if chain == uuid.Nil {
		return refuse(string(service.CodeInvalidRequest), "chain_id is required")
	}
	note, err := s.svc.SignCheckpoint(r.Context(), chain)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, api.Checkpoint{ChainID: chain.String(), Note: string(note)})
	return nil
}

func (s *Server) grantException(w http.ResponseWriter, r *http.Request) error {
	return s.grant(w, r, false)
}

func (s *Server) breakGlass(w http.ResponseWriter, r *http.Request) error {
	return s.grant(w, r, true)
}

// grant records an exception or break-glass grant, issued by the operator
// (operator:<issuer>, default operator:operator).
func (s *Server) grant(w http.ResponseWriter, r *http.Request, breakGlass bool) error {
	task, err := pathID(r, "task_id")
	if err != nil {
		return err
	}
	var req api.ExceptionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	issuer := req.Issuer
	if issuer == "" {
		issuer = roleOperator.String()
	}
	g, err := s.svc.GrantException(r.Context(), task, service.ExceptionRequest{
		GateID: req.GateID, ToolID: req.ToolID, ReasonCode: req.ReasonCode, ExpiresAt: req.ExpiresAt,
		Actor: req.Actor, IssuedBy: governance.ActorRef{Kind: roleOperator.String(), ID: issuer}, BreakGlass: breakGlass,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, g)
	return nil
}
