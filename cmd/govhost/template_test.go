package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTemplate_WorkspaceToolPolicy checks the generated policy against the
// consequences of AgentLane's workspace_tool_policy, through the real gates.
func TestTemplate_WorkspaceToolPolicy(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "exists.txt"), nil, 0o644))
	cache := testCacheDir
	requests := strings.Join([]string{
		`{"tool":"write","operation":"create_file","arguments":{"path":"` + root + `/new.txt"}}`,
		`{"tool":"bash","operation":"execute_command","arguments":{"command":"ls"}}`,
		`{"tool":"read","operation":"read_file","arguments":{"path":"/etc/hosts"}}`,
		`{"tool":"read","operation":"network_access","arguments":{}}`,
	}, "\n")
	cases := []struct {
		flags []string
		want  []string // decision per request
	}{
		// No flags: writes inside the root are allowed; bash and network denied; outside denied.
		{nil, []string{"allow", "deny", "deny", "deny"}},
		// Bash approval: bash always requires approval.
		{[]string{"--require-bash-approval"}, []string{"allow", "require_approval", "deny", "deny"}},
		// Side-effect approval covers writes.
		{[]string{"--require-approval-for-side-effects"}, []string{"require_approval", "deny", "deny", "deny"}},
		// A grant layer: bash must also be granted; downgrade turns its approval into allow.
		{[]string{"--require-bash-approval", "--grants", "bash"}, []string{"deny", "require_approval", "deny", "deny"}},
		{[]string{"--require-bash-approval", "--grants", "bash,write", "--grants-downgrade-side-effect-approval"}, []string{"allow", "allow", "deny", "deny"}},
		// An empty grant string denies everything.
		{[]string{"--grants", ""}, []string{"deny", "deny", "deny", "deny"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.flags, " "), func(t *testing.T) {
			code, policyJSON, stderr := runCLI(t, "", append([]string{"policy", "template", "workspace", "--root", root}, c.flags...)...)
			require.Equal(t, exitOK, code, stderr)
			file := filepath.Join(t.TempDir(), "policy.json")
			require.NoError(t, os.WriteFile(file, []byte(policyJSON), 0o644))
			code, stdout, stderr := runCLI(t, requests, "eval", "--policy", file, "--cache-dir", cache)
			require.Equal(t, exitOK, code, stderr)
			res := evalLinesOut(t, stdout)
			require.Len(t, res, len(c.want))
			for i, want := range c.want {
				require.Equal(t, want, res[i].Decision, "request %d: %+v", i, res[i])
			}
		})
	}
	code, _, _ := runCLI(t, "", "policy", "template", "workspace")
	require.Equal(t, exitUsage, code)
}

// --root '$workspace' prints one policy for every project: a dry run (or a
// task) supplies the workspace.
func TestTemplate_WorkspaceRef(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	code, policyJSON, stderr := runCLI(t, "", "policy", "template", "workspace", "--root", "$workspace")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, policyJSON, `"root": "$workspace"`)
	file := filepath.Join(t.TempDir(), "policy.json")
	require.NoError(t, os.WriteFile(file, []byte(policyJSON), 0o644))
	req := `{"tool":"write","operation":"create_file","arguments":{"path":"` + root + `/new.txt"}}`
	for _, tc := range []struct{ workspace, decision, reason string }{
		{root, "allow", "path.allowed"},
		{"/", "allow", "path.allowed"},
		{"", "deny", "path.no_workspace"},
	} {
		args := []string{"eval", "--policy", file, "--cache-dir", testCacheDir}
		if tc.workspace != "" {
			args = append(args, "--workspace", tc.workspace)
		}
		code, stdout, stderr := runCLI(t, req, args...)
		require.Equal(t, exitOK, code, stderr)
		res := evalLinesOut(t, stdout)
		require.Equal(t, tc.decision, res[0].Decision, "%+v", res[0])
		require.Equal(t, tc.reason, res[0].ReasonCode)
	}
}

// TestTemplate_WorkspaceForMCPFilesystem: --mcp-filesystem NAME binds the
// gates to the reference filesystem server's tools as NAME/TOOL, and
// --tools to any list.
func TestTemplate_WorkspaceForMCPFilesystem(t *testing.T) {
	code, out, stderr := runCLI(t, "", "policy", "template", "workspace", "--root", "/srv/ws", "--mcp-filesystem", "fs")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, `"fs/move_file"`)
	require.Contains(t, out, `"fs/read_multiple_files"`)
	require.NotContains(t, out, `"bash"`, "the MCP server's tools replace AgentLane's")
	code, out, stderr = runCLI(t, "", "policy", "template", "workspace", "--root", "/srv/ws", "--tools", "a/x,b/y")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, `"a/x"`)
	require.Contains(t, out, `"b/y"`)
}

// TestTemplate_OutCreatesGovhostDir: the README's flow into ~/.govhost
// works on a fresh machine: the template command creates the directory it
// writes into (0700), and the command that opens a data directory under it
// creates that.
func TestTemplate_OutCreatesGovhostDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".govhost")
	file := filepath.Join(dir, "fs-policy.json")
	code, out, errs := runCLI(t, "", "policy", "template", "workspace", "--root", t.TempDir(), "--mcp-filesystem", "filesystem", "--out", file)
	require.Equal(t, exitOK, code, errs)
	require.Empty(t, out, "the file, not stdout")
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	require.True(t, json.Valid(raw))

	code, _, errs = runCLI(t, "", "policy", "put", "--data", filepath.Join(dir, "fs"), "--file", file)
	require.Equal(t, exitOK, code, errs)
	_, err = os.Stat(filepath.Join(dir, "fs", "db"))
	require.NoError(t, err, "the data directory is created by the command that opens it")
}
