package server

import (
	"fmt"
	"mime"
	"net/http"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/service"
)

// Module bodies are raw bytes: application/wasm (the registered type) or
// application/octet-stream; no content type is read as octet-stream
// (RFC 9110 §8.3). Anything else is refused, so that curl's default
// form encoding (-d without -H) is a clear 415, not a broken module.
var moduleMediaTypes = map[string]bool{"application/wasm": true, "application/octet-stream": true}

// uploadModule is POST /v1/modules: 201 when this upload stored the
// module, 200 when the same bytes were already here; Location names the
// module either way. The whole body must arrive within the server's read
// timeout (HTTPServer: 30 s).
func (s *Server) uploadModule(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !moduleMediaTypes[mt] {
			return refuse(codeUnsupportedMedia, fmt.Sprintf("content type %q: send the .wasm bytes as application/wasm or application/octet-stream", ct))
		}
	}
	wasm, err := readBody(r, string(service.CodeInvalidRequest))
	if err != nil {
		return err
	}
	up, err := s.svc.UploadModule(r.Context(), wasm)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if up.Created {
		status = http.StatusCreated
	}
	w.Header().Set("Location", "/v1/modules/"+up.SHA256)
	writeJSON(w, status, up)
	return nil
}

func (s *Server) listModules(w http.ResponseWriter, r *http.Request) error {
	mods, err := s.svc.Modules(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.ModuleList{Modules: mods})
	return nil
}

func (s *Server) showModule(w http.ResponseWriter, r *http.Request) error {
	m, err := s.svc.Module(r.Context(), r.PathValue("digest"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}
