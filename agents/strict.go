package agents

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/govhost/govhost/governance"
)

// ErrAmbiguous matches a hook input that JSON readers could read
// differently: the sidecar refuses it (ambiguous_json) and the command hook
// blocks it, as it would any input it cannot read.
var ErrAmbiguous = errors.New("agents: ambiguous hook input")

// AmbiguousError says why a hook input is ambiguous.
type AmbiguousError struct {
	Agent  Agent
	Reason string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("agents: ambiguous %s hook input: %s", e.Agent, e.Reason)
}

// Is matches ErrAmbiguous.
func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

// checkStrict holds a hook input to the rules every input that decides
// something is held to (the API's bodies, the chain files): no key twice
// in any object, valid UTF-8, no unpaired surrogate escape
// (governance.CheckStrictJSON); and no top-level key that is another case
// of a field the dialect reads ({"tool_name":"Read","Tool_Name":"Bash"}:
// a case-insensitive reader, such as encoding/json, takes the second).
// Every other extra field the agents add stays accepted, as documented.
func (d *Dialect) checkStrict(body []byte, p payload) error {
	if err := governance.CheckStrictJSON(body, "hook input"); err != nil {
		return &AmbiguousError{Reason: err.Error()}
	}
	governed := d.governedFields()
	for key := range p {
		if governed[key] {
			continue
		}
		for field := range governed {
			if strings.EqualFold(key, field) {
				return &AmbiguousError{Reason: fmt.Sprintf("field %q is another case of %q, which decides the call (keys are exact)", key, field)}
			}
		}
	}
	return nil
}

// checkStrictInput holds a tool input the agent sent as a JSON-encoded
// string (Copilot CLI's toolArgs, Cursor's MCP tool_input) to
// CheckStrictJSON: the payload's check saw only a string.
func checkStrictInput(key string, text []byte) error {
	if err := governance.CheckStrictJSON(text, key); err != nil {
		return &AmbiguousError{Reason: err.Error()}
	}
	return nil
}

var governedOnce sync.Map // *Dialect → map[string]bool

// governedFields are the top-level fields the dialect reads, in any of its
// formats and events.
func (d *Dialect) governedFields() map[string]bool {
	if g, ok := governedOnce.Load(d); ok {
		return g.(map[string]bool)
	}
	g := map[string]bool{}
	for _, f := range d.Formats {
		fs := f.Fields
		for _, list := range [][]string{fs.Event, fs.Session, fs.Cwd, {fs.Roots}, fs.ToolName, fs.ToolInput, fs.ToolUseID, fs.ToolResponse, fs.Error} {
			for _, k := range list {
				if k != "" {
					g[k] = true
				}
			}
		}
		for _, spec := range f.Events {
			for _, k := range spec.InputFields {
				g[k] = true
			}
		}
	}
	governedOnce.Store(d, g)
	return g
}
