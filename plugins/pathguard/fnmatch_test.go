package pathguard

import (
	"encoding/json"
	"os"
	"path"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGlobMatch_PythonGolden checks the fnmatch port against answers
// recorded from CPython's fnmatch.fnmatchcase (testdata/fnmatch_golden.json).
func TestGlobMatch_PythonGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/fnmatch_golden.json")
	require.NoError(t, err)
	var golden struct {
		Cases [][3]any `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &golden))
	require.NotEmpty(t, golden.Cases)
	for _, c := range golden.Cases {
		pat, text, want := c[0].(string), c[1].(string), c[2].(bool)
		require.Equal(t, want, globMatch(compileGlob(pat), text), "fnmatchcase(%q, %q)", text, pat)
	}
}

func FuzzGlobMatch(f *testing.F) {
	for _, s := range []string{"*", "[!z-a]", "[z-a-c]", "[", "a*b*c", "[]-]"} {
		f.Add(s, "abc")
	}
	f.Fuzz(func(t *testing.T, pat, text string) {
		toks := compileGlob(pat)
		_ = globMatch(toks, text)
		if pat == "*" && !globMatch(toks, text) {
			t.Fatal("* must match everything")
		}
	})
}

func TestJoinClean_MatchesPathJoin(t *testing.T) {
	for _, base := range []string{"/", "/ws", "/a/b"} {
		for _, rel := range []string{"x", "x/y", "./x", "x/../y", "../x", "x/", "a//b", "..", ".", "~x", "a/./b"} {
			want := pathJoin(base, rel)
			require.Equal(t, want, joinClean(base, rel, want), "%s + %s (hint equal)", base, rel)
			require.Equal(t, want, joinClean(base, rel, "/other"), "%s + %s (hint other)", base, rel)
		}
	}
}

func pathJoin(a, b string) string { return path.Join(a, b) }
