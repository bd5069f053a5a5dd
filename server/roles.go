package server

import (
	"net/http"

	"github.com/govhost/govhost/api"
)

// role is who may call a route.
type role uint8

const (
	// roleAgent routes take the agents' token (DATA/token) or the
	// operator's.
	roleAgent role = iota
	// roleOperator routes take only the operator's token
	// (DATA/operator-token): what changes what the agents may do or signs
	// in the data directory's name.
	roleOperator
)

// OperatorTokenFileName is the operator token's file in the data directory.
const OperatorTokenFileName = api.OperatorTokenFileName

// operatorActor is who an operator route records as having acted.
const operatorActor = "operator"

// isOperator reports whether r carries the operator's token.
func (s *Server) isOperator(r *http.Request) bool {
	return s.operator != nil && s.operator.Matches(r)
}

// authorized reports whether r may call a route of role.
func (s *Server) authorized(rl role, r *http.Request) bool {
	if rl == roleOperator {
		return s.isOperator(r)
	}
	return s.token.Matches(r) || s.isOperator(r)
}

// unauthorized is the refusal of a request authorized returned false for:
// 401 without a valid token, 403 with the agents' token on an operator
// route.
func (s *Server) unauthorized(rl role, r *http.Request) error {
	if rl == roleOperator && s.token.Matches(r) {
		return refuse(codeForbidden, "this route needs the operator token (DATA/"+OperatorTokenFileName+"), not the agents' token")
	}
	return refuse(codeUnauthorized, "missing or wrong bearer token (Authorization: Bearer <token from the token file>)")
}
