package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runnableBlock is one command block of the documentation marked to be run
// (a fence whose info string is "sh runnable").
type runnableBlock struct {
	file string
	line int
	text string
}

// runnableBlocks reads the fenced blocks marked "sh runnable" from a
// Markdown file.
func runnableBlocks(t *testing.T, path string) []runnableBlock {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var blocks []runnableBlock
	var cur *runnableBlock
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			if isRunnableFence(trimmed) {
				cur = &runnableBlock{file: path, line: n}
			}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: a runnable block is not closed", path)
	return blocks
}

func isRunnableFence(fence string) bool {
	info := strings.Fields(strings.TrimPrefix(fence, "```"))
	return len(info) >= 2 && info[0] == "sh" && info[1] == "runnable"
}

// TestDocs_RunnableBlocks runs every command block of README.md and docs/
// marked "sh runnable" with the real govhost and govhost-hook on PATH, each
// in a fresh directory with its own data directory and home, so that a
// renamed command or flag fails here and not for a reader.
func TestDocs_RunnableBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	files := []string{filepath.Join(root, "README.md")}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append(files, docs...)
	var blocks []runnableBlock
	for _, f := range files {
		blocks = append(blocks, runnableBlocks(t, f)...)
	}
	require.NotEmpty(t, blocks, "README.md marks its tour's commands runnable")

	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/govhost", "./cmd/govhost-hook")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, b := range blocks {
		rel, _ := filepath.Rel(root, b.file)
		t.Run(strings.ReplaceAll(rel, string(filepath.Separator), "_")+":"+strconv.Itoa(b.line), func(t *testing.T) {
			work := t.TempDir()
			cmd := exec.Command("bash", "-euo", "pipefail", "-c", b.text)
			cmd.Dir = work
			cmd.Env = append(os.Environ(),
				"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"HOME="+filepath.Join(work, "home"),
				"GOVHOST_DATA="+filepath.Join(work, "govhost-data"),
				"GOVHOST_REPO="+root,
			)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s:%d\n%s\n--- output\n%s", rel, b.line, b.text, out)
		})
	}
}
