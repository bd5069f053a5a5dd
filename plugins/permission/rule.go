package permission

import "github.com/govhost/govhost/plugins/internal/fnmatch"

// fnmatchRule is one LionAGI rule pattern with its two compiled forms.
// Matching is Python's fnmatch.fnmatchcase (plugins/internal/fnmatch), which
// is what LionAGI's fnmatch.fnmatch does on POSIX; the lower-case fallback
// is LionAGI's own.
type fnmatchRule struct {
	pattern string
	detail  string // the Detail of its tier's verdict ("allowed by rule: " + pattern)
	any     bool   // the pattern "*": always matches, whatever the text
	exact   *fnmatch.Pattern
	lower   *fnmatch.Pattern // the lower-cased pattern (exact when lowering changes nothing)
}

func newRule(pattern string) fnmatchRule {
	r := fnmatchRule{pattern: pattern, any: pattern == "*"}
	if r.any {
		return r
	}
	r.exact = fnmatch.Compile(pattern)
	if lp := pyLower(pattern); lp != pattern {
		r.lower = fnmatch.Compile(lp)
	} else {
		r.lower = r.exact
	}
	return r
}

// matches is LionAGI's _matches: pattern == "*" or fnmatch(text, pattern)
// or fnmatch(text.lower(), pattern.lower()). lowered caches text.lower().
func (r *fnmatchRule) matches(text string, lowered *string, haveLower *bool) bool {
	if r.any {
		return true
	}
	if r.exact.Match(text) {
		return true
	}
	if !*haveLower {
		*lowered = pyLower(text)
		*haveLower = true
	}
	return r.lower.Match(*lowered)
}
