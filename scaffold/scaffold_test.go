package scaffold_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/scaffold"
	"github.com/govhost/govhost/sdk/gatecases"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, ok := scaffold.FindGovhostSource(".")
	require.True(t, ok)
	return root
}

// TestNew_EveryLanguage writes each project and checks what a user gets:
// the files, a cases file the runner accepts, the name everywhere it
// belongs and the SDK copied verbatim. Building each project is
// `make scaffold-test` (in .ci/run), which needs every toolchain.
func TestNew_EveryLanguage(t *testing.T) {
	require.Equal(t, []string{"assemblyscript", "c", "go", "rust"}, scaffold.Languages())
	want := map[string][]string{
		"go":             {"main.go", "go.mod", "Makefile"},
		"c":              {"gate.c", "govhost_gate.h", "Makefile"},
		"rust":           {"src/lib.rs", "govhost_gate/lib.rs", "govhost_gate/json.rs", "Makefile"},
		"assemblyscript": {"assembly/index.ts", "assembly/govhost.ts", "package.json", "Makefile"},
	}
	sdkCopies := map[string]string{
		"c/govhost_gate.h": "sdk/c/govhost_gate.h", "rust/govhost_gate/lib.rs": "sdk/rust/src/lib.rs",
		"rust/govhost_gate/json.rs": "sdk/rust/src/json.rs", "assemblyscript/assembly/govhost.ts": "sdk/assemblyscript/assembly/index.ts",
	}
	root := repoRoot(t)
	for lang, files := range want {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			written, err := scaffold.New(scaffold.Options{Lang: lang, Name: "net-guard", Dir: dir, GovhostSrc: root})
			require.NoError(t, err)
			require.Equal(t, append(files, "cases.yaml", "README.md", ".gitignore"), written)
			f, err := gatecases.LoadFile(filepath.Join(dir, "cases.yaml"))
			require.NoError(t, err)
			require.Equal(t, "net-guard", f.Gate)
			require.Equal(t, "net-guard.tool_blocked", f.Cases[0].Want.ReasonCode)
			readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
			require.NoError(t, err)
			require.Contains(t, string(readme), "govhost gate new --lang "+lang+" net-guard")
			for _, p := range files {
				require.Contains(t, string(readme), "`"+p+"`", "the README lists every file")
			}
			mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
			require.NoError(t, err)
			require.Contains(t, string(mk), "net-guard.wasm:")
			require.Contains(t, string(mk), "$(GOVHOST) test cases.yaml --gate net-guard.wasm")
			for copy, orig := range sdkCopies {
				if !strings.HasPrefix(copy, lang+"/") {
					continue
				}
				got, err := os.ReadFile(filepath.Join(dir, strings.TrimPrefix(copy, lang+"/")))
				require.NoError(t, err)
				src, err := os.ReadFile(filepath.Join(root, orig))
				require.NoError(t, err)
				require.Equal(t, string(src), string(got), "%s is a verbatim copy of %s", copy, orig)
			}
		})
	}
	dir := filepath.Join(t.TempDir(), "r")
	_, err := scaffold.New(scaffold.Options{Lang: "rust", Name: "net-guard", Dir: dir})
	require.NoError(t, err)
	lib, err := os.ReadFile(filepath.Join(dir, "src", "lib.rs"))
	require.NoError(t, err)
	require.Contains(t, string(lib), "struct NetGuard {")
	require.Contains(t, string(lib), "export_gate!(NetGuard);")
	mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	require.NoError(t, err)
	require.Contains(t, string(mk), "--crate-name net_guard")

	dir = filepath.Join(t.TempDir(), "g")
	_, err = scaffold.New(scaffold.Options{Lang: "go", Name: "g1", Dir: dir, GovhostSrc: root})
	require.NoError(t, err)
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	require.Contains(t, string(mod), "module g1\n")
	require.Contains(t, string(mod), "replace github.com/govhost/govhost => "+root+"\n")
}

func TestNew_Errors(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	for _, name := range []string{"", "Upper", "1abc", "a b", "a/b", "../x", strings.Repeat("a", 65), "é"} {
		_, err := scaffold.New(scaffold.Options{Lang: "c", Name: name, Dir: filepath.Join(dir, "x")})
		require.ErrorIs(t, err, scaffold.ErrBadName, "%q", name)
	}
	_, err := scaffold.New(scaffold.Options{Lang: "cobol", Name: "g", Dir: filepath.Join(dir, "x")})
	require.ErrorIs(t, err, scaffold.ErrUnknownLanguage)
	_, err = scaffold.New(scaffold.Options{Lang: "go", Name: "g", Dir: filepath.Join(dir, "x")})
	require.ErrorIs(t, err, scaffold.ErrNoGovhostSource)
	_, err = scaffold.New(scaffold.Options{Lang: "go", Name: "g", Dir: filepath.Join(dir, "x"), GovhostSrc: dir})
	require.ErrorIs(t, err, scaffold.ErrNoGovhostSource)

	full := filepath.Join(dir, "full")
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "mine.txt"), []byte("keep"), 0o644))
	_, err = scaffold.New(scaffold.Options{Lang: "go", Name: "g", Dir: full, GovhostSrc: root})
	require.ErrorIs(t, err, scaffold.ErrExists)
	b, err := os.ReadFile(filepath.Join(full, "mine.txt"))
	require.NoError(t, err)
	require.Equal(t, "keep", string(b), "nothing is overwritten")
	_, err = os.Stat(filepath.Join(full, "main.go"))
	require.ErrorIs(t, err, os.ErrNotExist)

	_, ok := scaffold.FindGovhostSource(t.TempDir())
	require.False(t, ok)
}
