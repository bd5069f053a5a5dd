package pathfacts_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/pathfacts"
)

func TestWorkspace_GitTopLevelElseCwd(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "pkg", "x")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(repo, ".git"), 0o755))
	plain := filepath.Join(root, "plain", "dir")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	wt := filepath.Join(root, "worktree")
	require.NoError(t, os.MkdirAll(filepath.Join(wt, "a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644))

	require.Equal(t, repo, pathfacts.Workspace(sub), "a subdirectory of a repository: its top level")
	require.Equal(t, repo, pathfacts.Workspace(repo))
	require.Equal(t, wt, pathfacts.Workspace(filepath.Join(wt, "a")), "a worktree's .git file counts")
	require.Equal(t, plain, pathfacts.Workspace(plain+"/"), "no repository: the cwd itself")
	require.Equal(t, "rel", pathfacts.Workspace("rel"))

	t.Setenv("HOME", root)
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	require.Equal(t, plain, pathfacts.Workspace(plain), "a dotfiles repository at home is not a workspace")
	require.Equal(t, repo, pathfacts.Workspace(sub))
}
