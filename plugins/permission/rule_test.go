package permission

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRule_Matches_CaseFallback(t *testing.T) {
	tests := []struct {
		pattern, text string
		want          bool
	}{
		{"rm *", "RM -rf", true},
		{"RM *", "rm -rf", true},
		{"Sudo *", "sUDO x", true},
		{"*", "anything\nat all", true},
		{"[A-Z]", "a", true}, // both lowered: [a-z] matches a
		{"[a-z]", "A", true},
		{"*.PY", "x.py", true},
		{"\u0130*", "i\u0307x", true}, // İ lowers to i + combining dot
		{"git *", "svn up", false},
	}
	for _, tt := range tests {
		r := newRule(tt.pattern)
		var lowered string
		have := false
		require.Equal(t, tt.want, r.matches(tt.text, &lowered, &have), "pattern %q text %q", tt.pattern, tt.text)
	}
}

// TestRule_Matches_CPythonGolden checks LionAGI's _matches (fnmatch, then
// the lower-case fallback) against CPython 3.11's answers: the fourth column
// of the shared fnmatch package's golden file, whose generator
// (translate_golden.py) records it for this package.
func TestRule_Matches_CPythonGolden(t *testing.T) {
	data, err := os.ReadFile("../internal/fnmatch/testdata/translate_golden.json")
	require.NoError(t, err)
	var g struct {
		Cases [][4]any `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(data, &g))
	require.NotEmpty(t, g.Cases)
	for _, c := range g.Cases {
		pat, text, want := c[0].(string), c[1].(string), c[3].(bool)
		r := newRule(pat)
		var lowered string
		have := false
		require.Equal(t, want, r.matches(text, &lowered, &have), "_matches(%q, %q)", text, pat)
	}
}
