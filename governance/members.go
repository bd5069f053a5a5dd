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
