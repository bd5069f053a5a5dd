package pathfacts

import (
	"os"
	"path/filepath"
)

// Workspace returns the workspace root of a session whose working
// directory is cwd: the top level of the git work tree cwd is in (the
// nearest directory at or above it holding a .git entry, a directory or a
// worktree's file), else cwd itself. A relative or empty cwd is returned
// cleaned, unchanged otherwise (the caller decides what a session without
// an absolute cwd means). A repository at the home directory or at "/"
// (a dotfiles repository) does not count: it would make every project
// under it one workspace. Like the other path facts it is a framework
// boundary, not a TOCTOU-safe check.
func Workspace(cwd string) string {
	if !filepath.IsAbs(cwd) {
		return cwd
	}
	cwd = filepath.Clean(cwd)
	home, _ := os.UserHomeDir()
	for dir := cwd; ; {
		if dir == home || dir == "/" {
			return cwd
		}
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return cwd
		}
		dir = parent
	}
}
