package fnmatch_test

import (
	"testing"

	"github.com/govhost/govhost/plugins/internal/fnmatch"
)

// realistic are patterns and texts of the kind the gates see: LionAGI rules
// against commands, denied_paths globs against path components.
var realistic = []struct{ pattern, text string }{
	{"*.key", "api.key"}, {"*.key", "keystone.py"}, {".env", ".env.local"},
	{"*secret*", "my-top-secret-file.txt"}, {"rm *", "rm -rf /tmp/build"},
	{"git *", "git status --porcelain"}, {"[a-z]*_test.go", "fnmatch_test.go"},
	{"*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaac"}, {"id_rsa*", "id_ed25519"},
	{"*/*.py", "src/pkg/mod/é/x.py"},
}

var sink bool

func BenchmarkPattern_Match(b *testing.B) {
	var golden []goldenCase
	for _, name := range goldenFiles {
		cases, _ := loadGolden(b, name)
		golden = append(golden, cases...)
	}
	sets := []struct {
		name  string
		cases []goldenCase
	}{
		{"realistic", nil},
		{"golden", golden},
	}
	for _, c := range realistic {
		sets[0].cases = append(sets[0].cases, goldenCase{pattern: c.pattern, text: c.text})
	}
	for _, s := range sets {
		b.Run("set="+s.name, func(b *testing.B) {
			pats := make([]*fnmatch.Pattern, len(s.cases))
			for i, c := range s.cases {
				pats[i] = fnmatch.Compile(c.pattern)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j, c := range s.cases {
					sink = pats[j].Match(c.text)
				}
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, c := range realistic {
			_ = fnmatch.Compile(c.pattern)
		}
	}
}
