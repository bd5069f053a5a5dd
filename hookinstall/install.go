package hookinstall

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/govhost/govhost/agents"
)

// DefaultAgentTimeout is the hook timeout written into an agent's
// settings; the command hook's own round-trip limit is 5 s shorter, so the
// hook always answers (and blocks on failure) before the agent gives up
// on it, which would let the call run.
const DefaultAgentTimeout = 60 * time.Second

// ClientMargin is how much sooner than the agent the command hook gives up.
const ClientMargin = 5 * time.Second

// ClaudeHTTPPath is the sidecar path of Claude Code's HTTP hook.
const ClaudeHTTPPath = "/v1/hooks/claude-code"

// TokenEnv is the environment variable Claude Code's HTTP hook reads the
// sidecar's token from (allowedEnvVars); it is never written into a file.
const TokenEnv = "GOVHOST_TOKEN"

// Options say what to install where.
type Options struct {
	Agent agents.Agent
	Scope Scope
	// Home and Project locate the settings files.
	Home, Project string
	// URL is the sidecar's base URL.
	URL string
	// TokenFile is the sidecar's token file, passed to command hooks.
	TokenFile string
	// HookCommand is the command hook's argv prefix: the absolute path of
	// govhost-hook, or of govhost followed by "hook".
	HookCommand []string
	// Timeout is the agent's hook timeout; default DefaultAgentTimeout.
	Timeout time.Duration
	// HTTP installs Claude Code's HTTP hook (POST /v1/hooks/claude-code)
	// instead of the command hook; only Claude Code has one.
	HTTP bool
	// Now stamps backups; default time.Now.
	Now func() time.Time
}

// Result says what Install did.
type Result struct {
	Path    string
	Changed bool
	// Backup is the copy of the file as it was, when it existed and
	// changed.
	Backup string
	// Note is the agent's failure behaviour (Target.Note).
	Note string
}

// Install merges govhost's hook entries into the agent's settings file:
// entries of other hooks are kept, govhost's own are replaced in place, a
// second run changes nothing. An existing file that is not a JSON object
// is refused and left alone.
func Install(o Options) (Result, error) {
	t, err := Lookup(o.Agent)
	if err != nil {
		return Result{}, err
	}
	if o.HTTP && o.Agent != agents.Claude {
		return Result{}, fmt.Errorf("hookinstall: only Claude Code has HTTP hooks; %s gets the command hook", o.Agent)
	}
	if o.URL == "" {
		return Result{}, errors.New("hookinstall: the sidecar URL is required")
	}
	if !o.HTTP && len(o.HookCommand) == 0 {
		return Result{}, errors.New("hookinstall: the command hook's path is required")
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultAgentTimeout
	}
	if o.Timeout <= ClientMargin {
		return Result{}, fmt.Errorf("hookinstall: a hook timeout of %s leaves the command hook no time (want more than %s)", o.Timeout, ClientMargin)
	}
	path, err := t.Path(o.Scope, o.Home, o.Project)
	if err != nil {
		return Result{}, err
	}
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Result{}, err
	}
	doc := map[string]any{}
	if exists && len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &doc); err != nil || doc == nil {
			return Result{}, fmt.Errorf("hookinstall: %s is not a JSON object; fix or move it first (nothing was changed): %v", path, err)
		}
	}
	if err := merge(t, doc, o); err != nil {
		return Result{}, fmt.Errorf("hookinstall: %s: %w", path, err)
	}
	text, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return Result{}, err
	}
	text = append(text, '\n')
	res := Result{Path: path, Note: t.Note}
	if exists && sameJSON(old, text) {
		return res, nil
	}
	mode := os.FileMode(0o644)
	if exists {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		res.Backup = path + ".govhost-backup-" + now().UTC().Format("20060102T150405.000000Z")
		if err := os.WriteFile(res.Backup, old, mode); err != nil {
			return Result{}, fmt.Errorf("hookinstall: backup: %w", err)
		}
	}
	if err := writeAtomic(path, text, mode); err != nil {
		return Result{}, err
	}
	res.Changed = true
	return res, nil
}

// merge puts govhost's handler on every event the target needs.
func merge(t Target, doc map[string]any, o Options) error {
	if t.Versioned {
		if v, ok := doc["version"]; ok && v != float64(1) {
			return fmt.Errorf("hooks file version %v, want 1", v)
		}
		doc["version"] = 1
	}
	hooksObj, _ := doc["hooks"].(map[string]any)
	if raw, ok := doc["hooks"]; ok && hooksObj == nil {
		return fmt.Errorf(`"hooks" is %T, want an object`, raw)
	}
	if hooksObj == nil {
		hooksObj = map[string]any{}
		doc["hooks"] = hooksObj
	}
	for _, event := range t.Events {
		h := handler(t, event, o)
		list, _ := hooksObj[event].([]any)
		if raw, ok := hooksObj[event]; ok && list == nil && raw != nil {
			return fmt.Errorf("hooks.%s is %T, want a list", event, raw)
		}
		hooksObj[event] = place(t, list, h)
	}
	return nil
}

// place replaces govhost's handler in list, or appends it.
func place(t Target, list []any, h map[string]any) []any {
	if t.Grouped {
		for _, g := range list {
			group, _ := g.(map[string]any)
			handlers, _ := group["hooks"].([]any)
			for i, x := range handlers {
				if isOurs(x) {
					handlers[i] = h
					return list
				}
			}
		}
		return append(list, map[string]any{"hooks": []any{h}})
	}
	for i, x := range list {
		if isOurs(x) {
			list[i] = h
			return list
		}
	}
	return append(list, h)
}

// MarkerHeader marks govhost's HTTP hook entries (a command hook is
// recognised by its command), so a reinstall replaces exactly them and
// another service's hooks on a /v1/hooks/ path are left alone.
const MarkerHeader = "X-Govhost-Hook"

// isOurs recognises govhost's handlers.
func isOurs(x any) bool {
	h, ok := x.(map[string]any)
	if !ok {
		return false
	}
	if headers, ok := h["headers"].(map[string]any); ok {
		if _, marked := headers[MarkerHeader]; marked {
			return true
		}
	}
	for _, k := range []string{"command", "bash"} {
		s, _ := h[k].(string)
		if strings.Contains(s, "govhost-hook") || strings.Contains(s, "govhost hook") {
			return true
		}
	}
	return false
}

// handler is govhost's hook entry for one event.
func handler(t Target, event string, o Options) map[string]any {
	h := map[string]any{}
	timeout := int(o.Timeout / t.TimeoutUnit)
	if o.HTTP {
		h["type"] = "http"
		h["url"] = strings.TrimRight(o.URL, "/") + ClaudeHTTPPath
		h["headers"] = map[string]any{"Authorization": "Bearer $" + TokenEnv, MarkerHeader: "1"}
		h["allowedEnvVars"] = []any{TokenEnv}
	} else {
		if t.Typed {
			h["type"] = "command"
		}
		h[t.CommandField] = CommandLine(t, event, o)
	}
	h[t.TimeoutField] = timeout
	for k, v := range t.FailClosed {
		h[k] = v
	}
	return h
}

// CommandLine is the shell command of the command hook for one event.
func CommandLine(t Target, event string, o Options) string {
	args := append([]string{}, o.HookCommand...)
	args = append(args, "--agent", string(t.Agent))
	if t.EventFlag {
		args = append(args, "--event", event)
	}
	args = append(args, "--url", o.URL)
	if o.TokenFile != "" {
		args = append(args, "--token-file", o.TokenFile)
	}
	args = append(args, "--timeout", (o.Timeout - ClientMargin).String())
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// shellQuote quotes a word for sh when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '-' || r == '_' || r == '.' || r == ':' || r == '=' || r == '@' || r == '+' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
