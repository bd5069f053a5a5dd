package pathguard

import "unicode/utf8"

// A port of Python's fnmatch.fnmatchcase (the POSIX fnmatch.fnmatch), which
// LionAGI applies to path components. Go's path.Match differs on most of
// these points:
//
//   - "*" matches any run of characters, "/" and newline included;
//   - "?" matches exactly one character;
//   - "[seq]" is a set, "[!seq]" its complement; "[^seq]" is a set holding
//     "^" (no negation); "]" right after "[" or "[!" is a member;
//   - ranges follow CPython's translate(): "-" first or last is literal, an
//     empty range (z-a) is dropped, an empty set never matches and the
//     negated empty set matches any character;
//   - an unclosed "[" is a literal; backslash is a literal, never an escape;
//   - no braces; the whole text must match; matching is case-sensitive.

type globKind uint8

const (
	globLit globKind = iota
	globAny
	globStar
	globSet
)

type globTok struct {
	kind   globKind
	r      rune // globLit
	set    []rune
	ranges [][2]rune
	negate bool
	never  bool // an empty set: matches nothing
}

func (t *globTok) matches(r rune) bool {
	switch t.kind {
	case globLit:
		return r == t.r
	case globAny:
		return true
	}
	if t.never {
		return false
	}
	in := false
	for _, c := range t.set {
		if c == r {
			in = true
			break
		}
	}
	if !in {
		for _, rg := range t.ranges {
			if rg[0] <= r && r <= rg[1] {
				in = true
				break
			}
		}
	}
	return in != t.negate
}

func compileGlob(pat string) []globTok {
	p := []rune(pat)
	n := len(p)
	var toks []globTok
	for i := 0; i < n; {
		c := p[i]
		i++
		switch c {
		case '*':
			if len(toks) == 0 || toks[len(toks)-1].kind != globStar {
				toks = append(toks, globTok{kind: globStar})
			}
		case '?':
			toks = append(toks, globTok{kind: globAny})
		case '[':
			j := i
			if j < n && p[j] == '!' {
				j++
			}
			if j < n && p[j] == ']' {
				j++
			}
			for j < n && p[j] != ']' {
				j++
			}
			if j >= n {
				toks = append(toks, globTok{kind: globLit, r: '['})
				continue
			}
			toks = append(toks, compileSet(p, i, j))
			i = j + 1
		default:
			toks = append(toks, globTok{kind: globLit, r: c})
		}
	}
	return toks
}

// compileSet builds the set p[i:j] (between "[" and "]") as CPython's
// fnmatch._translate does.
func compileSet(p []rune, i, j int) globTok {
	stuff := p[i:j]
	var chunks [][]rune
	if !containsRune(stuff, '-') {
		chunks = [][]rune{append([]rune(nil), stuff...)}
	} else {
		k := i + 1
		if p[i] == '!' {
			k = i + 2
		}
		for {
			k = indexRune(p, '-', k, j)
			if k < 0 {
				break
			}
			chunks = append(chunks, append([]rune(nil), p[i:k]...))
			i = k + 1
			k = k + 3
		}
		if chunk := p[i:j]; len(chunk) > 0 {
			chunks = append(chunks, append([]rune(nil), chunk...))
		} else {
			chunks[len(chunks)-1] = append(chunks[len(chunks)-1], '-')
		}
		// Remove empty ranges (invalid in a regex), right to left.
		for k := len(chunks) - 1; k > 0; k-- {
			prev, cur := chunks[k-1], chunks[k]
			if len(prev) > 0 && len(cur) > 0 && prev[len(prev)-1] > cur[0] {
				chunks[k-1] = append(prev[:len(prev)-1:len(prev)-1], cur[1:]...)
				chunks = append(chunks[:k], chunks[k+1:]...)
			}
		}
	}
	t := globTok{kind: globSet}
	total := 0
	for _, ch := range chunks {
		total += len(ch)
	}
	total += len(chunks) - 1 // the joining "-"
	switch {
	case total == 0:
		t.never = true
		return t
	case total == 1 && len(chunks) == 1 && chunks[0][0] == '!':
		t.negate = true // "[!]" after range removal: any character
		return t
	}
	if len(chunks[0]) > 0 && chunks[0][0] == '!' {
		t.negate = true
		chunks[0] = chunks[0][1:]
	}
	// Chunks are joined by "-": the last rune of one chunk and the first of
	// the next form a range; every other rune is a literal member. An empty
	// chunk leaves its "-" literal.
	for k, ch := range chunks {
		t.set = append(t.set, ch...)
		if k == 0 {
			continue
		}
		prev := chunks[k-1]
		if len(prev) == 0 || len(ch) == 0 {
			t.set = append(t.set, '-')
			continue
		}
		t.ranges = append(t.ranges, [2]rune{prev[len(prev)-1], ch[0]})
	}
	return t
}

// globMatch reports whether toks matches all of s.
func globMatch(toks []globTok, s string) bool {
	ti, pi := 0, 0 // byte offset in s, index in toks
	star, mark := -1, 0
	for ti < len(s) {
		r, size := rune(s[ti]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[ti:])
		}
		switch {
		case pi < len(toks) && toks[pi].kind == globStar:
			star, mark = pi, ti
			pi++
		case pi < len(toks) && toks[pi].matches(r):
			pi++
			ti += size
		case star >= 0:
			// Let the last star take one more character.
			pi = star + 1
			_, msize := utf8.DecodeRuneInString(s[mark:])
			mark += msize
			ti = mark
		default:
			return false
		}
	}
	for pi < len(toks) && toks[pi].kind == globStar {
		pi++
	}
	return pi == len(toks)
}

func containsRune(rs []rune, r rune) bool { return indexRune(rs, r, 0, len(rs)) >= 0 }

func indexRune(rs []rune, r rune, from, to int) int {
	for k := from; k < to && k < len(rs); k++ {
		if rs[k] == r {
			return k
		}
	}
	return -1
}
