package server

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/govhost/govhost/governance"
)

// The strict reading of a request body is governance's one strict reader
// (governance.ReadStrictJSON) against the shape of the destination's type:
// every object key, at any depth, spelled exactly as the destination's
// json tag (no case variant, no unknown key), no key twice in one object,
// text valid UTF-8 without unpaired surrogate escapes, and nothing after
// the document, in one pass that allocates nothing for a body that
// passes. encoding/json alone keeps the last duplicate, matches keys in
// any case and replaces invalid UTF-8 ({"tool":"reader","Tool":"bash"} was
// bash); it then only converts the values (decode). This file maps the
// reader's faults onto the API's error codes.

// shape is what a destination type accepts (governance.Shape).
type shape = governance.Shape

// freeShape accepts any JSON (keys unmatched, text still strict).
var freeShape = governance.FreeShape

// shapeOf returns the shape of t (cached).
func shapeOf(t reflect.Type) *shape { return governance.ShapeOf(t) }

// Why a body was refused by checkStrict.
var (
	errMalformed = errors.New("malformed JSON") // explained by encoding/json's message
	errTrailing  = errors.New("trailing data")
)

// maxStrictDepth bounds nesting (encoding/json's own bound is 10000).
const maxStrictDepth = governance.MaxStrictDepth

// checkStrict reads body against the shape of dst's type: nil, or a
// refusal with its stable code (ambiguous_json, unknown_field), or
// errMalformed for text that is not JSON (the caller lets encoding/json
// explain it), or errTrailing.
func checkStrict(body []byte, s *shape) error {
	err := governance.ReadStrictJSON(body, s)
	if err == nil {
		return nil
	}
	var se *governance.StrictJSONError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Fault {
	case governance.StrictInvalidUTF8:
		return refuse(codeAmbiguousJSON, "body: not valid UTF-8")
	case governance.StrictLoneSurrogate:
		return refuse(codeAmbiguousJSON, fmt.Sprintf("body: unpaired UTF-16 surrogate escape at byte %d", se.Offset))
	case governance.StrictDuplicateKey:
		return refuse(codeAmbiguousJSON, se.Where("body", true)+": appears twice")
	case governance.StrictUnknownKey:
		return refuse(codeUnknownField, fmt.Sprintf("unknown field %s in %s (keys are exact and case-sensitive)", strconv.Quote(se.Key), se.Where("body", false)))
	case governance.StrictTrailing:
		return errTrailing
	}
	return errMalformed
}
