package hookinstall_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/hookinstall"
)

const url = "http://127.0.0.1:7878"

func opts(t *testing.T, agent agents.Agent, scope hookinstall.Scope, home, project string) hookinstall.Options {
	return hookinstall.Options{Agent: agent, Scope: scope, Home: home, Project: project, URL: url,
		TokenFile: "/home/u/govhost-data/token", HookCommand: []string{"/opt/govhost/bin/govhost-hook"}}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	return doc
}

func TestInstall_EveryAgentBothScopes(t *testing.T) {
	for _, agent := range agents.Agents() {
		for _, scope := range []hookinstall.Scope{hookinstall.ScopeUser, hookinstall.ScopeProject} {
			t.Run(string(agent)+"/"+string(scope), func(t *testing.T) {
				home, project := t.TempDir(), t.TempDir()
				res, err := hookinstall.Install(opts(t, agent, scope, home, project))
				require.NoError(t, err)
				require.True(t, res.Changed)
				require.Empty(t, res.Backup, "nothing to back up")
				require.NotEmpty(t, res.Note)
				base := home
				if scope == hookinstall.ScopeProject {
					base = project
				}
				require.True(t, strings.HasPrefix(res.Path, base))
				tg, _ := hookinstall.Lookup(agent)
				c := hookinstall.Inspect(tg, scope, home, project, url, 55*time.Second)
				require.True(t, c.Installed)
				require.Empty(t, c.Problems)

				// Idempotent: a second run changes nothing.
				again, err := hookinstall.Install(opts(t, agent, scope, home, project))
				require.NoError(t, err)
				require.False(t, again.Changed)
				entries, _ := os.ReadDir(filepath.Dir(res.Path))
				for _, e := range entries {
					require.NotContains(t, e.Name(), "govhost-backup", "no backup when nothing changes")
				}
			})
		}
	}
}

func TestInstall_ClaudeHTTPHookIsFailClosed(t *testing.T) {
	home := t.TempDir()
	o := opts(t, agents.Claude, hookinstall.ScopeUser, home, "")
	o.HTTP = true
	res, err := hookinstall.Install(o)
	require.NoError(t, err)
	doc := readJSON(t, res.Path)
	pre := doc["hooks"].(map[string]any)["PreToolUse"].([]any)[0].(map[string]any)
	require.NotContains(t, pre, "matcher", "no matcher: every tool")
	h := pre["hooks"].([]any)[0].(map[string]any)
	require.Equal(t, "http", h["type"])
	require.Equal(t, url+"/v1/hooks/claude-code", h["url"])
	require.Equal(t, "block", h["onFailure"])
	require.Equal(t, float64(60), h["timeout"])
	require.Equal(t, []any{"GOVHOST_TOKEN"}, h["allowedEnvVars"])
	require.NotContains(t, string(mustRead(t, res.Path)), "/home/u/govhost-data/token", "no token or token path in an HTTP hook")

	_, err = hookinstall.Install(hookinstall.Options{Agent: agents.Codex, Scope: hookinstall.ScopeUser, Home: home, URL: url, HTTP: true})
	require.Error(t, err, "only Claude Code has HTTP hooks")
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func TestInstall_MergesWithABackup(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".claude", "settings.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	before := `{"model":"opus","permissions":{"allow":["Bash(npm test)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./lint.sh"}]}],"Stop":[{"hooks":[{"type":"command","command":"say done"}]}]}}`
	require.NoError(t, os.WriteFile(path, []byte(before), 0o600))
	res, err := hookinstall.Install(opts(t, agents.Claude, hookinstall.ScopeUser, home, ""))
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.FileExists(t, res.Backup)
	require.Equal(t, before, string(mustRead(t, res.Backup)), "the backup is the file as it was")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the file keeps its mode")

	doc := readJSON(t, path)
	require.Equal(t, "opus", doc["model"])
	hooks := doc["hooks"].(map[string]any)
	pre := hooks["PreToolUse"].([]any)
	require.Len(t, pre, 2, "the user's own hook stays, govhost's is added")
	require.Equal(t, "./lint.sh", pre[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"])
	cmd := pre[1].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"].(string)
	require.Equal(t, "/opt/govhost/bin/govhost-hook --agent claude --url http://127.0.0.1:7878 --token-file /home/u/govhost-data/token --timeout 55s", cmd)
	require.Len(t, hooks["Stop"].([]any), 1)

	// A new URL replaces govhost's entries in place.
	o := opts(t, agents.Claude, hookinstall.ScopeUser, home, "")
	o.URL = "http://127.0.0.1:9000"
	res, err = hookinstall.Install(o)
	require.NoError(t, err)
	require.True(t, res.Changed)
	pre = readJSON(t, path)["hooks"].(map[string]any)["PreToolUse"].([]any)
	require.Len(t, pre, 2)
	require.Contains(t, pre[1].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"], "9000")
}

func TestInstall_RefusesWhatItCannotMerge(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".codex", "hooks.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	for _, bad := range []string{`{"hooks":`, `[1,2]`, `{"hooks":[]}`, `{"hooks":{"PreToolUse":{}}}`} {
		require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
		_, err := hookinstall.Install(opts(t, agents.Codex, hookinstall.ScopeUser, home, ""))
		require.Error(t, err, bad)
		require.Equal(t, bad, string(mustRead(t, path)), "left alone")
	}
	cur := filepath.Join(home, ".cursor", "hooks.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(cur), 0o755))
	require.NoError(t, os.WriteFile(cur, []byte(`{"version":2,"hooks":{}}`), 0o644))
	_, err := hookinstall.Install(opts(t, agents.Cursor, hookinstall.ScopeUser, home, ""))
	require.ErrorContains(t, err, "version")
	o := opts(t, agents.Gemini, hookinstall.ScopeUser, home, "")
	o.Timeout = 3 * time.Second
	_, err = hookinstall.Install(o)
	require.Error(t, err, "a timeout that leaves the command hook no time")
	_, err = hookinstall.Install(opts(t, "windsurf", hookinstall.ScopeUser, home, ""))
	require.ErrorIs(t, err, agents.ErrUnknownAgent)
}

func TestInstall_CopilotNamesTheEventAndGeminiUsesMilliseconds(t *testing.T) {
	project := t.TempDir()
	res, err := hookinstall.Install(opts(t, agents.Copilot, hookinstall.ScopeProject, "", project))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(project, ".github", "hooks", "govhost.json"), res.Path)
	doc := readJSON(t, res.Path)
	require.Equal(t, float64(1), doc["version"])
	pre := doc["hooks"].(map[string]any)["preToolUse"].([]any)[0].(map[string]any)
	require.Equal(t, "command", pre["type"])
	require.Contains(t, pre["bash"], "--event preToolUse")
	require.Equal(t, float64(60), pre["timeoutSec"])

	home := t.TempDir()
	res, err = hookinstall.Install(opts(t, agents.Gemini, hookinstall.ScopeUser, home, ""))
	require.NoError(t, err)
	before := readJSON(t, res.Path)["hooks"].(map[string]any)["BeforeTool"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	require.Equal(t, float64(60000), before["timeout"])
}

func TestInspect_FindsWhatLetsCallsThrough(t *testing.T) {
	home := t.TempDir()
	o := opts(t, agents.Claude, hookinstall.ScopeUser, home, "")
	o.HTTP = true
	res, err := hookinstall.Install(o)
	require.NoError(t, err)
	doc := readJSON(t, res.Path)
	hooks := doc["hooks"].(map[string]any)
	delete(hooks, "PostToolUse")
	h := hooks["PreToolUse"].([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	h["timeout"] = 30
	delete(h, "onFailure")
	raw, _ := json.Marshal(doc)
	require.NoError(t, os.WriteFile(res.Path, raw, 0o644))
	tg, _ := hookinstall.Lookup(agents.Claude)
	c := hookinstall.Inspect(tg, hookinstall.ScopeUser, home, "", "http://127.0.0.1:9999", 55*time.Second)
	require.True(t, c.Installed)
	text := strings.Join(c.Problems, "\n")
	require.Contains(t, text, "PostToolUse: no govhost hook")
	require.Contains(t, text, "not longer than the sidecar's 55s")
	require.Contains(t, text, "onFailure is not block")
	require.Contains(t, text, "points elsewhere than http://127.0.0.1:9999")

	empty := hookinstall.Inspect(tg, hookinstall.ScopeProject, home, t.TempDir(), url, time.Minute)
	require.False(t, empty.Installed)
	require.True(t, empty.OK())
}

func TestHandler_ExpandHeaders_AsClaudeCodeDoes(t *testing.T) {
	h := hookinstall.Handler{Headers: map[string]string{"Authorization": "Bearer $GOVHOST_TOKEN", "X-Other": "${SECRET}"}, AllowedEnv: []string{"GOVHOST_TOKEN"}}
	env := map[string]string{"GOVHOST_TOKEN": "t0k", "SECRET": "never"}
	got, unset := h.ExpandHeaders(func(k string) string { return env[k] })
	require.Equal(t, "Bearer t0k", got["Authorization"])
	require.Equal(t, "", got["X-Other"], "a variable not in allowedEnvVars is sent empty")
	require.Equal(t, []string{"SECRET"}, unset)
	got, unset = h.ExpandHeaders(func(string) string { return "" })
	require.Equal(t, "Bearer ", got["Authorization"])
	require.ElementsMatch(t, []string{"GOVHOST_TOKEN", "SECRET"}, unset)
}

func TestInstall_CursorFailsClosed(t *testing.T) {
	home := t.TempDir()
	res, err := hookinstall.Install(opts(t, agents.Cursor, hookinstall.ScopeUser, home, t.TempDir()))
	require.NoError(t, err)
	doc := readJSON(t, res.Path)
	for _, h := range doc["hooks"].(map[string]any)["preToolUse"].([]any) {
		require.Equal(t, true, h.(map[string]any)["failClosed"])
	}
}
