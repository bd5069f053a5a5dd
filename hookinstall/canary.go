package hookinstall

import (
	"os"
	"regexp"
	"strings"

	"github.com/govhost/govhost/agents"
)

// Handler is one installed govhost hook entry as the agent reads it: a
// command (run by the agent's shell) or, for Claude Code's HTTP hook, a
// URL with headers.
type Handler struct {
	Command string
	URL     string
	Headers map[string]string
	// AllowedEnv are the environment variables the agent interpolates
	// into Headers (Claude Code's allowedEnvVars); any other $VAR is sent
	// empty.
	AllowedEnv []string
}

// Probe is the doctor's canary for one installed agent: a synthetic
// destructive call (agents.CanaryCommand) sent through exactly the handler
// the agent's settings name for its pre-tool event, and the session end
// that closes what it opened.
type Probe struct {
	Agent   agents.Agent
	Event   string
	Handler Handler
	Input   []byte
	// EndEvent, EndHandler and EndInput close the canary's session (empty
	// when the settings have no session-end hook).
	EndEvent   string
	EndHandler Handler
	EndInput   []byte
}

// Canary returns the probe of an installed settings file; ok is false when
// it has no pre-tool hook to probe. session names the canary's session;
// cwd is its working directory.
func (c Check) Canary(session, cwd string) (Probe, bool) {
	d, err := agents.Lookup(c.Target.Agent)
	if err != nil {
		return Probe{}, false
	}
	for _, event := range c.Target.Events {
		h, ok := c.Handlers[event]
		if !ok || d.EventKind(event) != agents.KindPreTool {
			continue
		}
		in, err := d.CanaryInput(event, session, cwd)
		if err != nil {
			continue
		}
		p := Probe{Agent: c.Target.Agent, Event: event, Handler: h, Input: in}
		if name, body, ok := d.EndInput(event, session, cwd); ok {
			if eh, ok := c.Handlers[name]; ok {
				p.EndEvent, p.EndHandler, p.EndInput = name, eh, body
			}
		}
		return p, true
	}
	return Probe{}, false
}

// handlerOf reads one installed entry.
func handlerOf(t Target, h map[string]any) Handler {
	out := Handler{}
	out.URL, _ = h["url"].(string)
	if out.URL == "" {
		out.Command, _ = h[t.CommandField].(string)
		return out
	}
	if headers, ok := h["headers"].(map[string]any); ok {
		out.Headers = map[string]string{}
		for k, v := range headers {
			s, _ := v.(string)
			out.Headers[k] = s
		}
	}
	if env, ok := h["allowedEnvVars"].([]any); ok {
		for _, v := range env {
			if s, ok := v.(string); ok {
				out.AllowedEnv = append(out.AllowedEnv, s)
			}
		}
	}
	return out
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// ExpandHeaders interpolates the handler's headers as Claude Code does:
// $VAR and ${VAR} of a variable in AllowedEnv take its value from getenv
// (os.Getenv when nil); any other reference is sent empty. unset lists the
// referenced variables that came out empty: the header the agent sends
// lacks them.
func (h Handler) ExpandHeaders(getenv func(string) string) (headers map[string]string, unset []string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	allowed := map[string]bool{}
	for _, v := range h.AllowedEnv {
		allowed[v] = true
	}
	headers = map[string]string{}
	seen := map[string]bool{}
	for k, v := range h.Headers {
		headers[k] = envRef.ReplaceAllStringFunc(v, func(ref string) string {
			name := strings.Trim(ref, "${}")
			val := ""
			if allowed[name] {
				val = getenv(name)
			}
			if val == "" && !seen[name] {
				seen[name] = true
				unset = append(unset, name)
			}
			return val
		})
	}
	return headers, unset
}
