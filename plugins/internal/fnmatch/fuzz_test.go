package fnmatch_test

import (
	"testing"
	"unicode/utf8"

	"github.com/govhost/govhost/plugins/internal/fnmatch"
)

func utf8Valid(s string) bool { return utf8.ValidString(s) }

// FuzzPattern_Match compares the matcher with the reference translation.
func FuzzPattern_Match(f *testing.F) {
	for _, seed := range [][2]string{
		{"*", ""}, {"rm *", "rm -rf /"}, {"[!z-a]", "x"}, {"[z-a!-c]", "-"},
		{"[]-a]", "^"}, {"*a*[b-]?", "xab-c"}, {`[\-a]`, "]"}, {"[a-c-e]", "-"},
		{"[z-a-c]", "abc"}, {"[", "abc"}, {"a*b*c", "abc"}, {"[]-]", "abc"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, pattern, text string) {
		p := fnmatch.Compile(pattern)
		got := p.Match(text) // must not panic, whatever the bytes
		if pattern == "*" && !got {
			t.Fatalf("* must match %q", text)
		}
		if !utf8.ValidString(pattern) || !utf8.ValidString(text) || len(pattern) > 64 || len(text) > 64 {
			return
		}
		want, err := referenceMatch(pattern, text)
		if err != nil {
			t.Fatalf("reference: %v", err)
		}
		if got != want {
			t.Fatalf("fnmatchcase(%q, %q) = %v, reference %v", text, pattern, got, want)
		}
	})
}
