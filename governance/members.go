package governance

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Member is one member of a JSON object, as written.
type Member struct {
	Key   string
	Value json.RawMessage
}

// ObjectMembers returns the members of the JSON object raw in document
// order, the way a Python dict built by json.loads holds them: a repeated
// key keeps its first position and its last value. Canonical JSON sorts
// keys, so this is how the author's order is read before canonicalisation
// (call arguments' key order, LionAGI's rule maps). raw must be an object.
func ObjectMembers(raw []byte) ([]Member, error) {
	if members, _, ok := readMembers(raw); ok {
		if len(members) == 0 {
			return nil, nil // as the token path answers {}
		}
		last := make(map[string]int, len(members))
		out := members[:0]
		for _, m := range members {
			if i, dup := last[m.Key]; dup {
				out[i].Value = m.Value
				continue
			}
			last[m.Key] = len(out)
			out = append(out, m)
		}
		return out, nil
	}
	return objectMembersSlow(raw)
}

// objectMembersSlow is ObjectMembers through encoding/json's tokens: the
// path of input readMembers refuses, whose errors are ObjectMembers'
// contract.
func objectMembersSlow(raw []byte) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, &JSONError{Offset: dec.InputOffset(), Reason: fmt.Sprintf("want an object, got %v", tok)}
	}
	var members []Member
	at := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(dec, err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(dec, err)
		}
		if i, dup := at[key]; dup {
			members[i].Value = v
			continue
		}
		at[key] = len(members)
		members = append(members, Member{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(dec, err)
	}
	return members, nil
}

// readMembers is the one ordered-object reader under ObjectMembers and the
// chain files' strict objects (readObject): the members of the object at
// the start of data, in document order, as written (a repeated key
// appears each time), keys decoded, values raw (no whitespace around
// them) in one copy of data, and the offset after the closing brace. It
// reads through the one strict walker, so it answers only for input every
// reader reads alike; ok is false for anything else (not an object,
// malformed, bad text, a key twice in a nested object), and callers then
// read with encoding/json, whose errors are their contract.
func readMembers(data []byte) (members []Member, end int, ok bool) {
	w := strictWalker{jsonScanner: jsonScanner{b: data}}
	w.ws()
	if w.i >= len(w.b) || w.b[w.i] != '{' {
		return nil, 0, false
	}
	var own []byte // data's one copy, which the values share
	members = make([]Member, 0, 8)
	if w.enter('}') {
		return members, w.i, true
	}
	for {
		w.ws()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return nil, 0, false
		}
		raw, escaped, f := w.str()
		if f != faultNone {
			return nil, 0, false
		}
		key := string(raw)
		if escaped {
			key = string(appendUnescaped(nil, raw))
		}
		if !w.colon() {
			return nil, 0, false
		}
		start := w.i
		if w.value(nil, 1) != faultNone {
			return nil, 0, false
		}
		if own == nil {
			own = append([]byte(nil), data...)
		}
		members = append(members, Member{Key: key, Value: own[start:w.i:w.i]})
		if done, f := w.after('}'); f != faultNone {
			return nil, 0, false
		} else if done {
			return members, w.i, true
		}
	}
}
