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
	// NB: what decides something is read as every other reader reads it:
	// no key twice, valid UTF-8 (governance.CheckStrictJSON, the chain
	// files' check), and keys exactly as documented (exactFields), where
	// encoding/json alone keeps the last duplicate, matches keys in any case
	// and replaces invalid UTF-8 ({"tool":"reader","Tool":"bash"} was bash).
	if err := governance.CheckStrictJSON(body, "body"); err != nil {
		return refuse(codeAmbiguousJSON, err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return refuse(codeTrailingData, "the body holds more than one JSON document")
	}
	var doc any
	generic := json.NewDecoder(bytes.NewReader(body))
	generic.UseNumber()
	if err := generic.Decode(&doc); err != nil {
		return decodeError(err)
	}
	if err := exactFields(doc, reflect.TypeOf(dst), "body"); err != nil {
		return err
	}
	return nil
}

var (
	rawMessageType  = reflect.TypeOf(json.RawMessage(nil))
	unmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

// exactFields refuses an object key that encoding/json matched to a field
// only case-insensitively: every key of an object decoded into a struct
// must be the field's JSON name exactly. Free-form values (RawMessage,
// maps of any, types with their own UnmarshalJSON) are theirs to check.
func exactFields(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		fields := jsonFields(t)
		for key, val := range obj {
			ft, ok := fields[key]
			if !ok {
				return refuse(codeUnknownField, fmt.Sprintf("unknown field %q in %s (keys are exact and case-sensitive)", key, path))
			}
			if err := exactFields(val, ft, path+"."+key); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		items, _ := v.([]any)
		for i, item := range items {
			if err := exactFields(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, _ := v.(map[string]any)
		for key, val := range obj {
			if err := exactFields(val, t.Elem(), path+"."+key); err != nil {
				return err
			}
		}
	}
	return nil
}

var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields maps a struct's JSON member names (embedded structs'
// promoted) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	fieldCache.Store(t, out)
	return out
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
