package server

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/service"
)

// Codes the server itself answers with, besides the service's.
const (
	codeUnauthorized     = "unauthorized"
	codeForbidden        = "forbidden"
	codeMalformedJSON    = "malformed_json"
	codeTrailingData     = "trailing_data"
	codeUnknownField     = "unknown_field"
	codeBodyTooLarge     = "body_too_large"
	codeUnsupportedMedia = "unsupported_media_type"
	codeNotFound         = "not_found"
	codeNotReady         = "not_ready"
	codeInternal         = "internal"
	codeUploadBusy       = "upload_busy"
	// codeAmbiguousJSON: a key twice in one object, text that is not
	// valid UTF-8, or an unpaired surrogate escape: JSON readers could take
	// it two ways.
	codeAmbiguousJSON = "ambiguous_json"
)

// statusOf maps every stable code to its one HTTP status.
var statusOf = map[string]int{
	codeUnauthorized:                       http.StatusUnauthorized,
	codeMalformedJSON:                      http.StatusBadRequest,
	codeTrailingData:                       http.StatusBadRequest,
	codeUnknownField:                       http.StatusBadRequest,
	codeBodyTooLarge:                       http.StatusRequestEntityTooLarge,
	codeUnsupportedMedia:                   http.StatusUnsupportedMediaType,
	codeNotFound:                           http.StatusNotFound,
	codeNotReady:                           http.StatusServiceUnavailable,
	codeInternal:                           http.StatusInternalServerError,
	codeUploadBusy:                         http.StatusServiceUnavailable,
	string(service.CodeLoadBusy):           http.StatusServiceUnavailable,
	string(service.CodeInvalidRequest):     http.StatusBadRequest,
	string(service.CodeTaskNotFound):       http.StatusNotFound,
	string(service.CodePolicyNotFound):     http.StatusNotFound,
	string(service.CodePolicyInvalid):      http.StatusUnprocessableEntity,
	string(service.CodePolicyConflict):     http.StatusConflict,
	string(service.CodeModuleNotFound):     http.StatusUnprocessableEntity,
	string(service.CodeChainNotFound):      http.StatusNotFound,
	string(service.CodeNotMintable):        http.StatusConflict,
	string(service.CodeCertNotFound):       http.StatusNotFound,
	string(service.CodeApprovalNotFound):   http.StatusNotFound,
	string(service.CodeAuthzNotFound):      http.StatusNotFound,
	string(service.CodePermitUnknown):      http.StatusNotFound,
	string(service.CodePermitUsed):         http.StatusConflict,
	string(service.CodePermitExpired):      http.StatusGone,
	string(service.CodePermitWrongTask):    http.StatusForbidden,
	string(service.CodeTaskClosed):         http.StatusConflict,
	string(service.CodeTooManyTasks):       http.StatusTooManyRequests,
	string(service.CodeUnavailable):        http.StatusServiceUnavailable,
	string(service.CodeEvidenceConflict):   http.StatusConflict,
	string(service.CodeModuleEmpty):        http.StatusBadRequest,
	string(service.CodeModuleUnknown):      http.StatusNotFound,
	string(service.CodeApprovalChanged):    http.StatusConflict,
	string(service.CodeTooManySubscribers): http.StatusTooManyRequests,
	codeForbidden:                          http.StatusForbidden,
	codeAmbiguousJSON:                      http.StatusBadRequest,
	string(service.CodeBindAmbiguous):      http.StatusConflict,
	string(service.CodeModuleQuota):        http.StatusInsufficientStorage,
	string(service.CodeHookUnknownAgent):   http.StatusNotFound,
	string(service.CodeHookMissingField):   http.StatusBadRequest,
	string(service.CodeHookUntranslatable): http.StatusBadRequest,
	string(service.CodeHookNoPendingCall):  http.StatusConflict,
	string(service.CodeHookPermitRefused):  http.StatusConflict,
	string(service.CodeHookUnknownSession): http.StatusNotFound,
	string(service.CodeHookTaskOpenFailed): http.StatusInternalServerError,
	string(service.CodeHookAuthorizeFail):  http.StatusInternalServerError,
	string(service.CodeHookCompleteFail):   http.StatusInternalServerError,
	string(service.CodeHookTaskCloseFail):  http.StatusInternalServerError,
}

// A module the host refuses as a gate is understood and refused: 422,
// whatever the host's reason.
func init() {
	for _, c := range service.ModuleRefusalCodes() {
		statusOf[string(c)] = http.StatusUnprocessableEntity
	}
}

// writeError answers with the stable error body. An error without a code
// is internal: logged, and answered without its text.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := string(service.CodeOf(err)), ""
	var he *httpError
	if errors.As(err, &he) {
		code, msg = he.code, he.msg
	} else if code != "" {
		var se *service.Error
		errors.As(err, &se)
		msg = se.Message
	}
	status, ok := statusOf[code]
	if !ok {
		s.log.Error("request failed", slog.String("route", r.Pattern), slog.Any("err", err))
		code, msg, status = codeInternal, "internal error (logged by the server)", http.StatusInternalServerError
	}
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="govhost"`)
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		w.Header().Set("Retry-After", retryAfterSeconds)
	}
	writeJSON(w, status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}})
}

// retryAfterSeconds is the Retry-After of every 503 and 429: the server is
// busy or starting, not broken.
const retryAfterSeconds = "2"

// httpError is a refusal decided by the server (decoding, auth, routing).
type httpError struct{ code, msg string }

func (e *httpError) Error() string { return e.code + ": " + e.msg }

func refuse(code, msg string) error { return &httpError{code: code, msg: msg} }
