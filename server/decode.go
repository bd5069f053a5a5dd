package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
)

// decode reads one JSON document into dst strictly: application/json (or
// no content type), every key exactly as documented at every depth and
// none twice, valid UTF-8, nothing after the document, the body within the
// server's limit (checkStrict); encoding/json then only converts the
// values. An empty body decodes as {}.
func decode(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return refuse(codeUnsupportedMedia, fmt.Sprintf("content type %q: send application/json", ct))
		}
	}
	buf, err := readPooled(r)
	if err != nil {
		return err
	}
	defer bodies.put(buf)
	body := buf.b
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	switch err := checkStrict(body, shapeOf(reflect.TypeOf(dst))); {
	case errors.Is(err, errMalformed):
		if err := json.Unmarshal(body, dst); err != nil {
			return decodeError(err)
		}
		return refuse(codeMalformedJSON, fmt.Sprintf("malformed JSON: nested deeper than %d", maxStrictDepth))
	case errors.Is(err, errTrailing):
		return refuse(codeTrailingData, "the body holds more than one JSON document")
	case err != nil:
		return err
	}
	// NB: encoding/json copies every string and raw value it keeps, so
	// the body's buffer goes back to the pool.
	if err := governance.DecodeJSON(body, dst); err != nil {
		return decodeError(err)
	}
	return nil
}

// pooledBody is a request body read into a recycled buffer.
type pooledBody struct{ b []byte }

type bodyPool struct{ sync.Pool }

// bodies recycles decode's body buffers; one that grew past maxPooledBody
// (a policy file, a large call) is left to the collector.
var bodies = bodyPool{sync.Pool{New: func() any { return &pooledBody{b: make([]byte, 0, 4096)} }}}

const maxPooledBody = 64 << 10

func (p *bodyPool) put(b *pooledBody) {
	if cap(b.b) <= maxPooledBody {
		b.b = b.b[:0]
		p.Put(b)
	}
}

// readPooled reads the whole body (within the route's limit: over it is
// body_too_large) into a pooled buffer.
func readPooled(r *http.Request) (*pooledBody, error) {
	buf := bodies.Get().(*pooledBody)
	b := buf.b[:0]
	if n := r.ContentLength; n > 0 && int64(cap(b)) < n+1 && n <= api.MaxModuleBytes {
		b = make([]byte, 0, n+1)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			// NB: closed once read to its end, net/http does not drain the
			// body again after the handler (an io.CopyN and its reader).
			_ = r.Body.Close()
			break
		}
		if err != nil {
			buf.b = b
			bodies.put(buf)
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return nil, refuse(codeBodyTooLarge, fmt.Sprintf("request body over %d bytes", tooLarge.Limit))
			}
			return nil, refuse(codeMalformedJSON, "reading the body: "+err.Error())
		}
	}
	buf.b = b
	return buf, nil
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
