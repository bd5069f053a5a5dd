package governance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// ErrArgumentsNotObject refuses a call whose arguments are not a JSON object.
var ErrArgumentsNotObject = errors.New("governance: tool arguments must be a JSON object")

// Arguments is the canonical copy of a call's arguments that gates see:
// parsed once, encoded once, hashed once per version. Every edge (HTTP,
// hooks, MCP) and the controller share it, so a request's arguments are
// decoded and hashed once. Build it with ParseArguments; treat it as
// read-only.
type Arguments struct {
	// Value is the argument object, numbers as json.Number.
	Value map[string]any
	// Order lists the keys in the caller's order.
	Order []string
	// Canonical is the canonical JSON text (float literals, which evidence
	// never holds, kept as written).
	Canonical []byte
	// Digest is the sha256 of Canonical.
	Digest string
}

// ParseArguments decodes a call's argument object, keeping the caller's
// key order and exact numbers, and canonicalises and hashes it: the one
// parse of a call's arguments (DecodeArguments, then NewArguments). Empty
// input means {}.
func ParseArguments(raw json.RawMessage) (Arguments, error) {
	obj, order, err := DecodeArguments(raw)
	if err != nil {
		return Arguments{}, err
	}
	return NewArguments(obj, order)
}

// DecodeArguments is the one decode of a call's argument object: the value
// (numbers as json.Number) and its keys in the caller's order, not yet
// canonical. An edge that reshapes the arguments before they are governed
// (a coding agent's hook renames its tool input's fields) decodes with it,
// reshapes the decoded object and hands the result to NewArguments, so
// the arguments are read once. Empty input means {}; a value that is not
// an object is ErrArgumentsNotObject.
func DecodeArguments(raw json.RawMessage) (map[string]any, []string, error) {
	countDecode()
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	obj, order, err := ParseObject(raw)
	if errors.Is(err, ErrNotObject) {
		return nil, nil, ErrArgumentsNotObject
	}
	if err != nil {
		return nil, nil, fmt.Errorf("governance: tool arguments: %w", err)
	}
	return obj, order, nil
}

// NewArguments canonicalises and hashes an argument object already
// decoded (numbers as json.Number); order is the caller's key order. It
// is the one canonicalisation of a version of a call's arguments.
func NewArguments(obj map[string]any, order []string) (Arguments, error) {
	countCanonicalisation()
	text, err := canonicalArguments(obj)
	if err != nil {
		return Arguments{}, err
	}
	return Arguments{Value: obj, Order: order, Canonical: text, Digest: SHA256Hex(text)}, nil
}

// canonicalArguments encodes arguments canonically. Arguments are transient,
// not evidence (ADR-0087 D4), so unlike payloads they may hold floats: a
// float literal is kept exactly as the caller wrote it.
func canonicalArguments(obj map[string]any) ([]byte, error) {
	text, err := Canonical(obj)
	if err == nil {
		return text, nil
	}
	if !errors.Is(err, ErrNotCanonical) {
		return nil, err
	}
	raw, merr := json.Marshal(obj)
	if merr != nil {
		return nil, fmt.Errorf("governance: tool arguments: %w", err)
	}
	// encoding/json sorts map keys and keeps json.Number literals verbatim.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// WithReplacement returns the arguments a transform gate produced, keeping
// the previous key order for keys that remain and appending new ones
// sorted.
func (a Arguments) WithReplacement(raw json.RawMessage) (Arguments, error) {
	v, err := ParseJSON(raw)
	if err != nil {
		return Arguments{}, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Arguments{}, ErrArgumentsNotObject
	}
	order := make([]string, 0, len(obj))
	kept := map[string]bool{}
	for _, k := range a.Order {
		if _, ok := obj[k]; ok {
			order = append(order, k)
			kept[k] = true
		}
	}
	var added []string
	for k := range obj {
		if !kept[k] {
			added = append(added, k)
		}
	}
	sort.Strings(added)
	return NewArguments(obj, append(order, added...))
}

// FieldNames returns the argument names sorted: evidence records names,
// never values.
func (a Arguments) FieldNames() []string {
	names := make([]string, 0, len(a.Value))
	for k := range a.Value {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// ForCallable returns the arguments as encoding/json would decode
// Canonical for a Go tool (numbers as float64), in a copy of their own:
// the callable may change it. It copies the already parsed Value instead
// of decoding the text a second time (a dozen allocations a governed
// call); a value the copy cannot vouch for (a number float64 cannot hold,
// a type the parser never produces) is decoded from Canonical, so the
// result and its errors stay encoding/json's (fuzzed:
// FuzzForCallable_SameAsEncodingJSON).
func (a Arguments) ForCallable() (map[string]any, error) {
	if out, ok := callableObject(a.Value); ok {
		return out, nil
	}
	var out map[string]any
	if err := json.Unmarshal(a.Canonical, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func callableObject(obj map[string]any) (map[string]any, bool) {
	if obj == nil {
		return nil, false
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		c, ok := callableValue(v)
		if !ok {
			return nil, false
		}
		out[k] = c
	}
	return out, true
}

// callableValue is v as encoding/json decodes it into an interface:
// strings, booleans and null are immutable and returned as they are (no
// new allocation), numbers become float64, lists and objects are copied.
func callableValue(v any) (any, bool) {
	switch x := v.(type) {
	case nil, bool, string:
		return v, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case map[string]any:
		return callableObject(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, ok := callableValue(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}
