package server

import (
	"fmt"
	"mime"
	"net/http"
	"time"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/server/wire"
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
	release, err := s.admitUpload(w, r)
	if err != nil {
		return err
	}
	defer release()
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
	writeJSON(w, status, wire.ModuleUpload(up))
	return nil
}

func (s *Server) listModules(w http.ResponseWriter, r *http.Request) error {
	mods, err := s.svc.Modules(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.ModuleList{Modules: wire.StoredModules(mods)})
	return nil
}

func (s *Server) showModule(w http.ResponseWriter, r *http.Request) error {
	m, err := s.svc.Module(r.Context(), r.PathValue("digest"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.Module(m))
	return nil
}

// admitUpload takes an upload slot before the body is read (UploadSlots,
// UploadQueue, UploadQueueWait), or refuses with upload_busy.
func (s *Server) admitUpload(w http.ResponseWriter, r *http.Request) (release func(), err error) {
	release = func() { <-s.uploads }
	admitted := func() (func(), error) {
		// NB: the read timeout ran while the upload waited; its body gets
		// the whole of it again.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(ReadTimeout))
		return release, nil
	}
	select {
	case s.uploads <- struct{}{}:
		return admitted()
	default:
	}
	if s.uploadsQueue.Add(1) > UploadQueue {
		s.uploadsQueue.Add(-1)
		return nil, refuse(codeUploadBusy, fmt.Sprintf("%d module uploads in progress and %d waiting; retry later", UploadSlots, UploadQueue))
	}
	defer s.uploadsQueue.Add(-1)
	t := time.NewTimer(UploadQueueWait)
	defer t.Stop()
	select {
	case s.uploads <- struct{}{}:
		return admitted()
	case <-t.C:
		return nil, refuse(codeUploadBusy, fmt.Sprintf("no upload slot within %v; retry later", UploadQueueWait))
	case <-r.Context().Done():
		return nil, refuse(codeUploadBusy, "the client went away while waiting for an upload slot")
	}
}
