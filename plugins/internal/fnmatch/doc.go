// Package fnmatch is the one port of Python's fnmatch.fnmatchcase used by the
// built-in gates: LionAGI matches permission rules (plugins/permission) and
// denied path components (plugins/pathguard) with it, and Go's path.Match
// differs on most points. It owns the pattern syntax and the matcher; it does
// not own case folding (LionAGI's lower-case fallback lives in
// plugins/permission) nor any notion of paths.
//
// Semantics, those of CPython's fnmatch.translate followed by the re module:
//
//   - '*' matches any run of characters, '/' and newline included;
//   - '?' matches exactly one character, newline included;
//   - "[seq]" matches one character of seq, "[!seq]" one character not in
//     it; '^' does not negate (it is a member); ']' right after '[' or "[!"
//     is a member; "a-z" is a range; '-' first or last is literal; an empty
//     range ("z-a") is dropped, a set left empty never matches and a negated
//     empty set matches any character; an unclosed '[' is a literal '[';
//   - backslash is an ordinary character everywhere;
//   - no braces; the whole text must match; matching is case-sensitive.
//
// The package imports only the standard library: it is compiled into the
// gates' wasip1 modules.
//
// # Why a hand-written matcher, not regexp?
//
// Translating to Go's regexp would pull the regexp engine into every wasm
// gate and still need a port of translate's set handling; the matcher here
// is allocation-free and linear with one backtrack point per star. The
// tests check it against a regexp translation (reference_test.go) and
// against CPython's answers (testdata).
//
// # Why this implementation?
//
// It replaces two ports (plugins/permission and plugins/pathguard) with the
// same semantics. The permission port matched about 1.2–1.7x faster (a
// literal fast path, an early "never" flag, a pointer to the set instead of
// a wide token) and compiled with 2.4x less memory, so it is the base; the
// pathguard port's ASCII fast path for decoding the text is kept (no
// measurable cost). fnmatch_bench_test.go measures it.
package fnmatch
