package certify

import (
	"time"

	"github.com/govhost/govhost/governance"
)

// payload is a record's payload_json, parsed once.
type payload struct{ m map[string]any }

func parsePayload(text string) (payload, error) {
	v, err := governance.ParseJSON([]byte(text))
	if err != nil {
		return payload{}, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return payload{}, &governance.ValidationError{Field: "payload_json", Reason: "must be an object"}
	}
	return payload{m: m}, nil
}

func (p payload) has(k string) bool { _, ok := p.m[k]; return ok }

func (p payload) str(k string) (string, bool) {
	s, ok := p.m[k].(string)
	return s, ok
}

func (p payload) time(k string) (time.Time, bool) {
	s, ok := p.str(k)
	if !ok {
		return time.Time{}, false
	}
	t, err := governance.ParseTime(k, s)
	return t, err == nil
}

// actorOf returns "kind:id" of the actor a payload names, "" for none.
func actorOf(p payload) string {
	kind, ok1 := p.str("actor_kind")
	id, ok2 := p.str("actor_id")
	if !ok1 || !ok2 {
		return ""
	}
	return kind + ":" + id
}
