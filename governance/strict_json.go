package governance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Strict reading of the documents govhost exchanges with other programs
// (chain files, certificates, bundles). encoding/json's struct decoding
// matches keys case-insensitively and keeps the last of repeated keys, so a
// line carrying "record_type" and "Record_Type" would read differently in
// Go than in jq or Python. These helpers read an object member by member
// with exact keys instead, so govhost sees what every other reader sees, or
// refuses the document with the field that differs.

// strictObject holds the members of one JSON object read by readObject,
// raw, by exact key.
type strictObject struct {
	what    string
	members map[string]json.RawMessage
}

// readObject reads data as exactly one JSON object whose keys are exactly
// fields: each present once, spelled exactly, and no other key. Text must
// be valid UTF-8 without unpaired surrogate escapes (encoding/json would
// silently replace them). Errors are *ValidationError naming the field.
func readObject(data []byte, what string, fields []string) (strictObject, error) {
	if o, ok := readObjectFast(data, what, fields); ok {
		return o, nil
	}
	return readObjectSlow(data, what, fields)
}

// readObjectSlow is readObject through encoding/json's tokens: the path of
// a document the fast reader does not pass, whose errors name the field.
func readObjectSlow(data []byte, what string, fields []string) (strictObject, error) {
	fail := func(field, reason string) (strictObject, error) {
		return strictObject{}, &ValidationError{Field: field, Reason: reason}
	}
	if !utf8.Valid(data) {
		return fail(what, fmt.Sprintf("not valid UTF-8 (byte %d)", invalidUTF8Offset(data)))
	}
	if off, ok := findLoneSurrogate(data); ok {
		return fail(what, fmt.Sprintf("unpaired UTF-16 surrogate escape at byte %d", off))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return fail(what, "not a complete JSON object: "+tokenError(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fail(what, "must be a JSON object")
	}
	members := make(map[string]json.RawMessage, len(fields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(what, "not a complete JSON object: "+tokenError(err))
		}
		key := tok.(string) // inside an object, the decoder yields only string keys here
		if !contains(fields, key) {
			reason := "unknown field"
			if near := caseVariantOf(fields, key); near != "" {
				reason = fmt.Sprintf("unknown field (keys are exact: %q is not %q)", key, near)
			}
			return fail(what+"."+key, reason)
		}
		if _, dup := members[key]; dup {
			return fail(key, "appears twice")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(key, "not a complete JSON value: "+tokenError(err))
		}
		members[key] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return fail(what, "not a complete JSON object: "+tokenError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(what, "unexpected data after the JSON object")
	}
	for _, f := range fields {
		if _, ok := members[f]; !ok {
			return fail(f, "is required (write null for an absent value)")
		}
	}
	return strictObject{what: what, members: members}, nil
}

// readObjectFast is readObject through the one ordered-object reader
// (readMembers), for a document that passes; ok is false for anything
// else, which readObject then reads through encoding/json's tokens to name
// the field at fault.
func readObjectFast(data []byte, what string, fields []string) (strictObject, bool) {
	members, end, ok := readMembers(data)
	if !ok {
		return strictObject{}, false
	}
	for _, c := range data[end:] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return strictObject{}, false
		}
	}
	if len(members) != len(fields) {
		return strictObject{}, false // a field missing, unknown or twice
	}
	byKey := make(map[string]json.RawMessage, len(fields))
	for _, m := range members {
		if _, dup := byKey[m.Key]; dup || !contains(fields, m.Key) {
			return strictObject{}, false
		}
		byKey[m.Key] = m.Value
	}
	return strictObject{what: what, members: byKey}, true
}

func tokenError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v at byte %d", se, se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end (truncated?)"
	}
	return err.Error()
}

func contains(set []string, s string) bool {
	for _, x := range set {
		if x == s {
			return true
		}
	}
	return false
}

func caseVariantOf(fields []string, key string) string {
	for _, f := range fields {
		if strings.EqualFold(f, key) {
			return f
		}
	}
	return ""
}

func (o strictObject) isNull(field string) bool {
	return string(o.members[field]) == "null"
}

// str reads a JSON string member.
func (o strictObject) str(field string) (string, error) {
	raw := o.members[field]
	if len(raw) == 0 || raw[0] != '"' {
		return "", &ValidationError{Field: field, Reason: "must be a string"}
	}
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 {
		return string(body), nil // no escapes: the decoder already checked the text
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &ValidationError{Field: field, Reason: "must be a string"}
	}
	return s, nil
}

// nullableStr reads a string or null member; ok is false for null.
func (o strictObject) nullableStr(field string) (s string, ok bool, err error) {
	if o.isNull(field) {
		return "", false, nil
	}
	s, err = o.str(field)
	return s, err == nil, err
}

// uuid reads a UUID in its one canonical form.
func (o strictObject) uuid(field string) (uuid.UUID, error) {
	s, err := o.str(field)
	if err != nil {
		return uuid.Nil, err
	}
	return ParseCanonicalUUID(field, s)
}

// nullUUID reads a canonical UUID or null.
func (o strictObject) nullUUID(field string) (uuid.NullUUID, error) {
	if o.isNull(field) {
		return uuid.NullUUID{}, nil
	}
	id, err := o.uuid(field)
	return uuid.NullUUID{UUID: id, Valid: err == nil}, err
}

// count reads a nonnegative integer written the one canonical way: decimal
// digits, no sign, no leading zero, no fraction or exponent.
func (o strictObject) count(field string) (int64, error) {
	raw := string(o.members[field])
	if !isCanonicalCount(raw) {
		return 0, &ValidationError{Field: field, Reason: fmt.Sprintf("must be a nonnegative integer in canonical form, not %s", truncateForError(raw))}
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, &ValidationError{Field: field, Reason: "integer out of range"}
	}
	return n, nil
}

func isCanonicalCount(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// timestamp reads a time in TimeLayout exactly.
func (o strictObject) timestamp(field string) (time.Time, error) {
	s, err := o.str(field)
	if err != nil {
		return time.Time{}, err
	}
	return ParseTime(field, s)
}

// digest reads a 64-lowercase-hex digest.
func (o strictObject) digest(field string) (string, error) {
	s, err := o.str(field)
	if err != nil {
		return "", err
	}
	return s, checkDigest(field, s)
}

// object reads a nested member strictly.
func (o strictObject) object(field string, fields []string) (strictObject, error) {
	inner, err := readObject(o.members[field], field, fields)
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) && ve.Field != field && !strings.HasPrefix(ve.Field, field+".") {
			ve.Field = field + "." + ve.Field
		}
		return strictObject{}, err
	}
	return inner, nil
}

func truncateForError(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// ParseCanonicalUUID parses s only in the one form records use: 36
// characters, lowercase hex, dashes at 8, 13, 18 and 23. Upper case,
// braces, urn:uuid: and undashed forms — all of which uuid.Parse accepts —
// are refused with a *ValidationError naming field.
func ParseCanonicalUUID(field, s string) (uuid.UUID, error) {
	if !isCanonicalUUID(s) {
		return uuid.Nil, &ValidationError{Field: field, Reason: fmt.Sprintf("must be a UUID in canonical lower-case form (8-4-4-4-12), not %q", truncateForError(s))}
	}
	return uuid.Parse(s)
}

func isCanonicalUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

func quoteForError(s string) string { return strconv.Quote(truncateForError(s)) }

// CheckStrictJSON refuses a JSON document that different readers could
// read differently: text that is not valid UTF-8 (encoding/json would
// replace it with U+FFFD, making two byte strings one), an unpaired UTF-16
// surrogate escape, or a key repeated within one object at any depth (last
// one wins in Go, first in others). It is the check the chain files get,
// for documents whose keys are free (call arguments, request bodies); what
// is malformed JSON is left to the decoder. Errors are *ValidationError
// naming what.
func CheckStrictJSON(data []byte, what string) error { return checkExactKeys(data, what, nil) }

// checkExactKeys walks a whole JSON document (through the one strict
// walker) and refuses any object key that the shape does not name, and
// any key repeated within one object. A document checked against
// KeysAtAnyDepth(tags) and then decoded into structs with those json tags
// (with DisallowUnknownFields) reads exactly as every other reader reads
// it: encoding/json's case-insensitive matching and last-duplicate-wins
// never come into play. A nil shape accepts every key (duplicates are
// still refused). Faults are reported as encoding/json's token stream
// would meet them: in document order, over every value of a stream, and
// malformed text ends the check without an error (the decoder reports it);
// bad text (invalid UTF-8, then an unpaired surrogate anywhere) beats a
// repeated or unknown key.
func checkExactKeys(data []byte, what string, shape *Shape) error {
	w := strictWalker{jsonScanner: jsonScanner{b: data}, unknownStops: true}
	f := w.stream(shape)
	if f == faultNone {
		return nil // every string was read: the text is valid UTF-8, its surrogates paired
	}
	if !utf8.Valid(data) {
		return &ValidationError{Field: what, Reason: "not valid UTF-8"}
	}
	if off, ok := findLoneSurrogate(data); ok {
		return &ValidationError{Field: what, Reason: fmt.Sprintf("unpaired UTF-16 surrogate escape at byte %d", off)}
	}
	switch f {
	case walkDuplicate:
		return &ValidationError{Field: string(w.faultKey), Reason: "appears twice"}
	case walkUnknown:
		key := w.unknown.Key
		reason := fmt.Sprintf("unknown field %q", key)
		for known := range shape.Fields {
			if strings.EqualFold(known, key) {
				reason = fmt.Sprintf("unknown field %q (keys are exact: it is not %q)", key, known)
				break
			}
		}
		return &ValidationError{Field: what, Reason: reason}
	}
	return nil // malformed: the decoder says why
}
