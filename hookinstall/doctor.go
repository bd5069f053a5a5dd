package hookinstall

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/govhost/govhost/agents"
)

// Check is the doctor's view of one agent's settings file.
type Check struct {
	Target Target
	Scope  Scope
	Path   string
	// Installed: the file has at least one govhost entry.
	Installed bool
	// Problems are what keeps the hook from governing every call.
	Problems []string
	// Handlers are govhost's entries, by event.
	Handlers map[string]Handler
}

// OK reports a file without problems.
func (c Check) OK() bool { return len(c.Problems) == 0 }

// Inspect checks one settings file: every event govhost needs has its
// entry, each points at url, each has a timeout longer than sidecar (the
// longest the sidecar or the command hook may take to answer: a hook the
// agent kills lets the call run), and the agent's fail-closed fields are
// set. A missing file is not installed, with no problems.
func Inspect(t Target, scope Scope, home, project, url string, sidecar time.Duration) Check {
	c := Check{Target: t, Scope: scope}
	path, err := t.Path(scope, home, project)
	if err != nil {
		c.Problems = append(c.Problems, err.Error())
		return c
	}
	c.Path = path
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c
	}
	if err != nil {
		c.Problems = append(c.Problems, err.Error())
		return c
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil || doc == nil {
		c.Problems = append(c.Problems, "not a JSON object")
		return c
	}
	hooksObj, _ := doc["hooks"].(map[string]any)
	found := map[string]map[string]any{}
	for _, event := range t.Events {
		list, _ := hooksObj[event].([]any)
		for _, x := range flatten(t, list) {
			if isOurs(x) {
				found[event] = x.(map[string]any)
				c.Installed = true
			}
		}
	}
	if !c.Installed {
		return c
	}
	c.Handlers = map[string]Handler{}
	for event, h := range found {
		c.Handlers[event] = handlerOf(t, h)
	}
	if t.Agent == agents.Gemini {
		// Gemini CLI ignores every hook, silently, when hooksConfig.enabled is false.
		if cfg, ok := doc["hooksConfig"].(map[string]any); ok && cfg["enabled"] == false {
			c.Problems = append(c.Problems, "hooksConfig.enabled is false: Gemini CLI runs no hook at all")
		}
	}
	if t.Versioned && doc["version"] != float64(1) {
		c.Problems = append(c.Problems, `"version" must be 1`)
	}
	for _, event := range t.Events {
		h, ok := found[event]
		if !ok {
			c.Problems = append(c.Problems, event+": no govhost hook (calls of this event are not governed)")
			continue
		}
		target, _ := h["url"].(string)
		if target == "" {
			target, _ = h[t.CommandField].(string)
		}
		if url != "" && !strings.Contains(target, strings.TrimRight(url, "/")) {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: points elsewhere than %s", event, url))
		}
		n, ok := h[t.TimeoutField].(float64)
		switch {
		case !ok:
			c.Problems = append(c.Problems, fmt.Sprintf("%s: no %s (the agent's default may be shorter than the sidecar's %s)", event, t.TimeoutField, sidecar))
		case time.Duration(n)*t.TimeoutUnit <= sidecar:
			c.Problems = append(c.Problems, fmt.Sprintf("%s: %s %v is not longer than the sidecar's %s: the agent would give up first and let the call run", event, t.TimeoutField, n, sidecar))
		}
		for k, v := range t.FailClosed {
			if h[k] != v {
				c.Problems = append(c.Problems, fmt.Sprintf("%s: %s is not %v (a hook that cannot run would let the call run)", event, k, v))
			}
		}
	}
	return c
}

func flatten(t Target, list []any) []any {
	if !t.Grouped {
		return list
	}
	var out []any
	for _, g := range list {
		group, _ := g.(map[string]any)
		handlers, _ := group["hooks"].([]any)
		out = append(out, handlers...)
	}
	return out
}
