package fnmatch_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/plugins/internal/fnmatch"
)

func TestPattern_Match_Semantics(t *testing.T) {
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
		{"empty pattern matches empty", "", "", true},
		{"empty pattern only empty", "", "a", false},
		{"set member", "[abc]", "b", true},
		{"set non-member", "[abc]", "d", false},
		{"bang negates", "[!abc]", "d", true},
		{"bang negated member", "[!abc]", "a", false},
		{"caret does not negate", "[^abc]", "d", false},
		{"caret is a member", "[^abc]", "^", true},
		{"range", "[a-c]", "b", true},
		{"range outside", "[a-c]", "d", false},
		{"reversed range never matches", "[z-a]", "m", false},
		{"reversed range never matches empty", "[z-a]*", "", false},
		{"negated reversed range matches anything", "[!z-a]", "\n", true},
		{"reversed range dropped, rest kept", "[z-a-c]", "c", true},
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
		{"no case folding", "*.KEY", "api.key", false},
		{"non-ascii question mark", "?", "é", true},
		{"non-ascii set", "[é]", "é", true},
		{"non-ascii range", "[é-ü]", "ö", true},
		{"non-ascii after star", "*é", "ééé", true},
		{"invalid utf-8 byte is one character", "a?b", "a\xffb", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fnmatch.Compile(tt.pattern).Match(tt.text)
			require.Equal(t, tt.want, got, "pattern %q text %q", tt.pattern, tt.text)
			ref, err := referenceMatch(tt.pattern, tt.text)
			require.NoError(t, err)
			if utf8Valid(tt.text) {
				require.Equal(t, tt.want, ref, "reference disagrees")
			}
		})
	}
}

func TestPattern_Match_ZeroValue(t *testing.T) {
	var p fnmatch.Pattern
	require.True(t, p.Match(""))
	require.False(t, p.Match("a"))
}
