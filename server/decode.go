package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/govhost/govhost/api"
)

// decode reads one JSON document into dst strictly: application/json (or
// no content type), unknown fields refused, nothing after the document,
// the body within the server's limit. An empty body decodes as {}.
func decode(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return refuse(codeUnsupportedMedia, fmt.Sprintf("content type %q: send application/json", ct))
		}
	}
	body, err := readBody(r, codeMalformedJSON)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return refuse(codeTrailingData, "the body holds more than one JSON document")
	}
	return nil
}

// readBody reads the whole body within the route's limit: over it is
// body_too_large; a body that breaks off is refused with brokenCode.
func readBody(r *http.Request, brokenCode string) ([]byte, error) {
	var body []byte
	var err error
	if n := r.ContentLength; n > 0 && n <= api.MaxModuleBytes {
		// NB: one buffer of the announced size, not ReadAll's doublings (a
		// 31 MiB module cost about twice its size in garbage).
		buf := bytes.NewBuffer(make([]byte, 0, n+1))
		_, err = buf.ReadFrom(r.Body)
		body = buf.Bytes()
	} else {
		body, err = io.ReadAll(r.Body)
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, refuse(codeBodyTooLarge, fmt.Sprintf("request body over %d bytes", tooLarge.Limit))
	}
	if err != nil {
		return nil, refuse(brokenCode, "reading the body: "+err.Error())
	}
	return body, nil
}

func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return refuse(codeMalformedJSON, "malformed JSON: "+err.Error())
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the body"
		}
		return refuse("invalid_request", fmt.Sprintf("%s: want %s, got JSON %s", field, typ.Type, typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return refuse(codeUnknownField, strings.TrimPrefix(err.Error(), "json: "))
	}
	return refuse(codeMalformedJSON, err.Error())
}

// writeJSON writes v as the response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
