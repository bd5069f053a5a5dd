package duties

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/govhost/govhost/abi"
)

// Reason codes.
const (
	ReasonSeparate      = "duties.separate"      // the actor performed no incompatible duty
	ReasonUnconstrained = "duties.unconstrained" // the tool's duty has no incompatible duties
	ReasonConflict      = "duties.conflict"      // the actor performed an incompatible duty in this task
	ReasonNoActor       = "duties.no_actor"      // the operation names no actor
	ReasonNoHistory     = "duties.no_history"    // the host supplied no duty history
)

// ErrConfig is matched (errors.Is) by every configuration error.
var ErrConfig = errors.New("duties: invalid config")

// ConfigError names the configuration field that was refused.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("duties: config: field %q: %v", e.Field, e.Err)
}

func (e *ConfigError) Unwrap() []error { return []error{ErrConfig, e.Err} }

// Config is the gate's configuration:
//
//	{"incompatible": {"merge": ["write", "patch"], "deploy": ["merge"]}}
//
// For an operation of tool "merge", the actor must not have completed a
// "write" or "patch" operation earlier in the task. Duties are tool ids.
// The relation is taken as given (not made symmetric): list both
// directions when both are meant.
type Config struct {
	Incompatible map[string][]string `json:"incompatible"`
}

// Gate is a configured separation-of-duties gate; immutable, safe for
// concurrent use.
type Gate struct {
	incompatible map[string]map[string]bool
}

// New reads configJSON strictly: "incompatible" is required, every duty
// and every incompatible duty a nonempty string, every list nonempty, no
// duty incompatible with itself, no other field.
func New(configJSON []byte) (*Gate, error) {
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader(configJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, &ConfigError{Field: "incompatible", Err: err}
	}
	if len(cfg.Incompatible) == 0 {
		return nil, &ConfigError{Field: "incompatible", Err: errors.New("must name at least one duty")}
	}
	g := &Gate{incompatible: map[string]map[string]bool{}}
	for duty, others := range cfg.Incompatible {
		field := "incompatible." + duty
		if duty == "" {
			return nil, &ConfigError{Field: field, Err: errors.New("a duty id must be nonempty")}
		}
		if len(others) == 0 {
			return nil, &ConfigError{Field: field, Err: errors.New("must list at least one incompatible duty")}
		}
		set := map[string]bool{}
		for _, o := range others {
			switch {
			case o == "":
				return nil, &ConfigError{Field: field, Err: errors.New("a duty id must be nonempty")}
			case o == duty:
				return nil, &ConfigError{Field: field, Err: errors.New("a duty cannot be incompatible with itself")}
			}
			set[o] = true
		}
		g.incompatible[duty] = set
	}
	return g, nil
}

// Evaluate decides one operation: the duty is the tool; the actor and the
// history come from the host.
func (g *Gate) Evaluate(in abi.GateInput) abi.GateOutput {
	others, constrained := g.incompatible[in.Tool]
	if !constrained {
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: ReasonUnconstrained}
	}
	actor := in.Context.Actor
	if actor == nil || actor.Kind == "" || actor.ID == "" {
		return deny(in.Tool, ReasonNoActor, "no actor: separation of duties cannot be checked")
	}
	if in.Context.Assignments == nil {
		return deny(in.Tool, ReasonNoHistory, "no duty history from the host: separation of duties cannot be checked")
	}
	var conflicts []string
	seen := map[string]bool{}
	for _, a := range *in.Context.Assignments {
		if a.Actor == *actor && others[a.Duty] && !seen[a.Duty] {
			seen[a.Duty] = true
			conflicts = append(conflicts, a.Duty)
		}
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return deny(in.Tool, ReasonConflict, fmt.Sprintf("%s:%s already performed %s in this task, incompatible with %s", actor.Kind, actor.ID, strings.Join(conflicts, ", "), in.Tool))
	}
	return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: ReasonSeparate}
}

func deny(tool, reason, detail string) abi.GateOutput {
	return abi.GateOutput{
		Decision: abi.DecisionDeny, ReasonCode: reason, Detail: detail,
		Message: "permission denied: " + tool + " is not allowed for this actor (separation of duties)",
	}
}
