package policyfile

import (
	"encoding/json"
	"strings"

	"github.com/govhost/govhost/governance"
)

// GateConfig turns a gate's configuration as the author wrote it into the
// binding's canonical text (what the policy digest covers and the gate
// receives).
//
// Canonical JSON sorts object keys, which loses an order only one built-in
// gate cares about: the permission gate's LionAGI rule maps, where a later
// key that canonicalises like an earlier one ("bash_tool" after "bash")
// replaces its list (ADR-0086 D1). For module "permission" each
// lionagi.allow / deny / escalate object whose keys may canonicalise alike
// is therefore rewritten, in document order, into the list form the gate
// also accepts ([{"tool": …, "patterns": […]}, …]) before
// canonicalisation; a map without such keys means the same sorted and
// keeps its form. Every other module's configuration is only
// canonicalised.
func GateConfig(module string, raw json.RawMessage) (string, error) {
	if module == "permission" {
		if ordered, ok, err := orderRuleMaps(raw); err != nil {
			return "", err
		} else if ok {
			raw = ordered
		}
	}
	v, err := governance.ParseJSON(raw)
	if err != nil {
		return "", err
	}
	text, err := governance.Canonical(v)
	if err != nil {
		return "", err
	}
	return string(text), nil
}

// ruleTiers are the LionAGI rule maps whose key order matters.
var ruleTiers = map[string]bool{"allow": true, "deny": true, "escalate": true}

// orderRuleMaps rewrites lionagi's rule maps into the ordered list form. ok
// is false when there is nothing to rewrite (no lionagi object, or rule
// tiers that are not objects, which the gate refuses with a precise error).
func orderRuleMaps(raw json.RawMessage) (json.RawMessage, bool, error) {
	if _, err := governance.ParseJSON(raw); err != nil {
		return nil, false, err
	}
	top, err := governance.ObjectMembers(raw)
	if err != nil {
		return nil, false, nil
	}
	changed := false
	for i := range top {
		if top[i].Key != "lionagi" {
			continue
		}
		lion, err := governance.ObjectMembers(top[i].Value)
		if err != nil {
			return nil, false, nil // a preset name, or a type the gate refuses
		}
		for j := range lion {
			if !ruleTiers[lion[j].Key] {
				continue
			}
			rules, err := governance.ObjectMembers(lion[j].Value)
			if err != nil || !orderMatters(rules) {
				continue // sorted keys mean the same map: keep its form (and digest)
			}
			list := make([]orderedRule, len(rules))
			for k, r := range rules {
				list[k] = orderedRule{Tool: r.Key, Patterns: r.Value}
			}
			if lion[j].Value, err = json.Marshal(list); err != nil {
				return nil, false, err
			}
			changed = true
		}
		if top[i].Value, err = marshalMembers(lion); err != nil {
			return nil, false, err
		}
	}
	if !changed {
		return nil, false, nil
	}
	out, err := marshalMembers(top)
	return out, err == nil, err
}

// lionAliases are LionAGI's _TOOL_ALIASES, the only keys besides letter
// case that canonicalise alike.
var lionAliases = map[string]string{
	"bash_tool": "bash", "reader_tool": "reader", "editor_tool": "editor",
	"search_tool": "search", "context_tool": "context",
}

// orderMatters reports whether two keys of a rule map may canonicalise
// alike (lower-cased, then aliased), so that their order decides which list
// survives. A key outside ASCII counts as a possible collision: Python's
// str.lower is the gate's to apply, not the loader's.
func orderMatters(rules []governance.Member) bool {
	seen := make(map[string]bool, len(rules))
	for _, r := range rules {
		for i := 0; i < len(r.Key); i++ {
			if r.Key[i] >= 0x80 {
				return true
			}
		}
		k := strings.ToLower(r.Key)
		if a, ok := lionAliases[k]; ok {
			k = a
		}
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// orderedRule is one entry of the list form of a LionAGI rule map.
type orderedRule struct {
	Tool     string          `json:"tool"`
	Patterns json.RawMessage `json:"patterns"`
}

func marshalMembers(members []governance.Member) (json.RawMessage, error) {
	m := make(map[string]json.RawMessage, len(members))
	for _, mem := range members {
		m[mem.Key] = mem.Value
	}
	return json.Marshal(m)
}
