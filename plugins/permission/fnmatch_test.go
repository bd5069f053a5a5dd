package permission

import (
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestGlob_Match_Semantics(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		text    string
		want    bool
	}{
		{"star matches empty", "*", "", true},
		{"star crosses slash", "a*b", "a/x/b", true},
		{"star crosses newline", "echo *", "echo a\nb", true},
		{"question mark one char", "a?c", "abc", true},
		{"question mark not zero chars", "a?c", "ac", false},
		{"question mark matches slash", "a?c", "a/c", true},
		{"question mark matches newline", "a?c", "a\nc", true},
		{"anchored at end", "git *", "xgit status", false},
		{"anchored whole text", "abc", "abcd", false},
		{"literal equal", "abc", "abc", true},
		{"set member", "[abc]", "b", true},
		{"set non-member", "[abc]", "d", false},
		{"bang negates", "[!abc]", "d", true},
		{"bang negated member", "[!abc]", "a", false},
		{"caret does not negate", "[^abc]", "d", false},
		{"caret is a member", "[^abc]", "^", true},
		{"range", "[a-c]", "b", true},
		{"range outside", "[a-c]", "d", false},
		{"reversed range never matches", "[z-a]", "m", false},
		{"negated reversed range matches anything", "[!z-a]", "\n", true},
		{"leading hyphen literal", "[-a]", "-", true},
		{"trailing hyphen literal", "[a-]", "-", true},
		{"close bracket first is member", "[]a]", "]", true},
		{"close bracket after bang is member", "[!]a]", "]", false},
		{"unclosed bracket is literal", "[ab", "[ab", true},
		{"unclosed bracket not a set", "[ab", "a", false},
		{"lone bracket", "[", "[", true},
		{"empty brackets are literal", "[]", "[]", true},
		{"backslash literal", `a\b`, `a\b`, true},
		{"backslash does not escape star", `\*`, `\x`, true},
		{"backslash does not escape star literal", `\*`, `*`, false},
		{"backslash in set", `[\]`, `\`, true},
		{"no braces", "{a,b}", "a", false},
		{"braces literal", "{a,b}", "{a,b}", true},
		{"stars compress", "a**b", "ab", true},
		{"multiple stars", "*a*a*b", "xaaxab", true},
		{"multiple stars fail", "*a*a*b", "xab", false},
		{"range joined by hyphen after range is literal", "[a-c-e]", "-", true},
		{"range joined by hyphen after range no d", "[a-c-e]", "d", false},
		{"python quirk: merged set starting with bang negates", "[z-a!b]", "b", false},
		{"python quirk: merged set starting with bang negates other", "[z-a!b]", "x", true},
		{"python quirk: hyphen after negation is literal", "[z-a!-c]", "b", true},
		{"python quirk: hyphen after negation excluded", "[z-a!-c]", "-", false},
		{"double hyphen set", "[--]", "-", true},
		{"set op chars literal", "[a&&b]", "&", true},
		{"rm prefix needs space", "rm *", "rmdir x", false},
		{"rm trailing space", "rm *", "rm ", true},
		{"non-ascii question mark", "?", "é", true},
		{"non-ascii set", "[é]", "é", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compileGlob(tt.pattern).match(tt.text)
			require.Equal(t, tt.want, got, "pattern %q text %q", tt.pattern, tt.text)
			ref, err := referenceMatch(tt.pattern, tt.text)
			require.NoError(t, err)
			require.Equal(t, tt.want, ref, "reference disagrees")
		})
	}
}

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
	}
	for _, tt := range tests {
		r := newRule(tt.pattern)
		var lowered string
		have := false
		require.Equal(t, tt.want, r.matches(tt.text, &lowered, &have), "pattern %q text %q", tt.pattern, tt.text)
	}
}

type fnmatchGolden struct {
	Translate map[string]string `json:"translate"`
	Cases     [][4]any          `json:"cases"`
}

func loadFnmatchGolden(t testing.TB) fnmatchGolden {
	data, err := os.ReadFile("testdata/fnmatch_golden.json")
	require.NoError(t, err)
	var g fnmatchGolden
	require.NoError(t, json.Unmarshal(data, &g))
	require.NotEmpty(t, g.Cases)
	return g
}

// TestGlob_Match_CPythonGolden checks the matcher, the LionAGI case fallback
// and the reference translation against CPython 3.11's answers
// (testdata/gen_golden.py).
func TestGlob_Match_CPythonGolden(t *testing.T) {
	g := loadFnmatchGolden(t)
	for pat, want := range g.Translate {
		require.Equal(t, want, pyTranslate(pat), "translate(%q)", pat)
	}
	for _, c := range g.Cases {
		pat, text := c[0].(string), c[1].(string)
		wantCase, wantLion := c[2].(bool), c[3].(bool)
		require.Equal(t, wantCase, compileGlob(pat).match(text), "fnmatchcase(%q, %q)", text, pat)
		ref, err := referenceMatch(pat, text)
		require.NoError(t, err)
		require.Equal(t, wantCase, ref, "reference fnmatchcase(%q, %q)", text, pat)
		r := newRule(pat)
		var lowered string
		have := false
		require.Equal(t, wantLion, r.matches(text, &lowered, &have), "_matches(%q, %q)", text, pat)
	}
}

// FuzzGlob_Match compares the matcher with the reference translation.
func FuzzGlob_Match(f *testing.F) {
	for _, seed := range [][2]string{
		{"*", ""}, {"rm *", "rm -rf /"}, {"[!z-a]", "x"}, {"[z-a!-c]", "-"},
		{"[]-a]", "^"}, {"*a*[b-]?", "xab-c"}, {`[\-a]`, "]"}, {"[a-c-e]", "-"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(text) || len(pattern) > 64 || len(text) > 64 {
			t.Skip()
		}
		want, err := referenceMatch(pattern, text)
		if err != nil {
			t.Fatalf("reference: %v", err)
		}
		if got := compileGlob(pattern).match(text); got != want {
			t.Fatalf("fnmatchcase(%q, %q) = %v, reference %v", text, pattern, got, want)
		}
	})
}
