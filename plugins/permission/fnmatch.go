package permission

import "unicode/utf8"

// This file is a hand-written port of Python's fnmatch.fnmatchcase, which is
// what LionAGI's rules use (fnmatch.fnmatch on POSIX does no case folding).
// Its semantics, none of which path.Match shares:
//
//   - '*' matches any run of characters, including '/' and newlines;
//   - '?' matches exactly one character, newline included;
//   - "[seq]" matches one character of seq, "[!seq]" one character not in
//     it; '^' does not negate (it is a member); ']' right after '[' or "[!"
//     is a member; "a-z" is a range; an unclosed '[' is a literal '[';
//   - backslash is an ordinary character everywhere;
//   - no braces; the whole text must match.
//
// Python builds a regular expression (fnmatch.translate) and lets the re
// module parse its character sets, so the odd corners of bracket parsing are
// those of translate followed by sre_parse. compileGlob follows translate
// step by step for a set and then reads the result as sre_parse would;
// reference_test.go checks it against an independent translation to Go
// regexp syntax, and testdata/fnmatch_golden.json against CPython's answers.

type globOp uint8

const (
	opLit   globOp = iota // one literal character
	opAny                 // '?', or a negated empty set: any one character
	opClass               // a character set
	opStar                // any run of characters
	opNever               // an empty set, "(?!)" in Python: matches nothing
)

type globTok struct {
	op    globOp
	r     rune
	class *charClass
}

type charClass struct {
	negate bool
	runes  []rune
	ranges []runeRange
}

type runeRange struct{ lo, hi rune }

func (c *charClass) contains(r rune) bool {
	in := false
	for _, x := range c.runes {
		if x == r {
			in = true
			break
		}
	}
	if !in {
		for _, rg := range c.ranges {
			if rg.lo <= r && r <= rg.hi {
				in = true
				break
			}
		}
	}
	return in != c.negate
}

// glob is a compiled fnmatch pattern. The zero value matches only "".
type glob struct {
	toks []globTok
	// never is set when the pattern holds an empty set ("[z-a]"), which
	// Python translates to "(?!)": nothing matches.
	never bool
	// literal is set when the pattern has no wildcard: match is ==.
	literal bool
	text    string
}

// compileGlob compiles an fnmatch pattern. Every string is a valid pattern.
func compileGlob(pattern string) *glob {
	pat := []rune(pattern)
	g := &glob{}
	n := len(pat)
	for i := 0; i < n; {
		c := pat[i]
		i++
		switch c {
		case '*':
			if len(g.toks) == 0 || g.toks[len(g.toks)-1].op != opStar {
				g.toks = append(g.toks, globTok{op: opStar})
			}
		case '?':
			g.toks = append(g.toks, globTok{op: opAny})
		case '[':
			tok, next, ok := compileSet(pat, i)
			if !ok {
				g.toks = append(g.toks, globTok{op: opLit, r: '['})
				continue
			}
			i = next
			if tok.op == opNever {
				g.never = true
				continue
			}
			g.toks = append(g.toks, tok)
		default:
			g.toks = append(g.toks, globTok{op: opLit, r: c})
		}
	}
	g.literal = true
	for _, t := range g.toks {
		if t.op != opLit {
			g.literal = false
			break
		}
	}
	if g.literal {
		g.text = pattern
	}
	return g
}

// setTok is one character of translate's "stuff" string for a set: a
// member character, or (sep) an unescaped '-' that joins two chunks into a
// range.
type setTok struct {
	r   rune
	sep bool
}

// compileSet reads the set whose '[' is at pat[i-1]. ok is false when the
// set is not closed (then '[' is a literal). op is opClass, opAny (a negated
// empty set) or opNever (an empty set).
func compileSet(pat []rune, i int) (tok globTok, next int, ok bool) {
	n := len(pat)
	j := i
	if j < n && pat[j] == '!' {
		j++
	}
	if j < n && pat[j] == ']' {
		j++
	}
	for j < n && pat[j] != ']' {
		j++
	}
	if j >= n {
		return globTok{}, i, false
	}
	next = j + 1

	// translate: split at the hyphens that form ranges.
	var stuff []setTok
	hasHyphen := false
	for _, r := range pat[i:j] {
		if r == '-' {
			hasHyphen = true
			break
		}
	}
	if !hasHyphen {
		for _, r := range pat[i:j] {
			stuff = append(stuff, setTok{r: r})
		}
	} else {
		var chunks [][]rune
		k := i + 1
		if pat[i] == '!' {
			k = i + 2
		}
		for {
			k = indexRune(pat, '-', k, j)
			if k < 0 {
				break
			}
			chunks = append(chunks, append([]rune(nil), pat[i:k]...))
			i = k + 1
			k += 3
		}
		if i < j {
			chunks = append(chunks, append([]rune(nil), pat[i:j]...))
		} else {
			chunks[len(chunks)-1] = append(chunks[len(chunks)-1], '-')
		}
		// Remove empty ranges (lo > hi): drop both ends, join the chunks.
		for k := len(chunks) - 1; k > 0; k-- {
			prev, cur := chunks[k-1], chunks[k]
			if prev[len(prev)-1] > cur[0] {
				merged := append(append([]rune(nil), prev[:len(prev)-1]...), cur[1:]...)
				chunks[k-1] = merged
				chunks = append(chunks[:k], chunks[k+1:]...)
			}
		}
		for ci, ch := range chunks {
			if ci > 0 {
				stuff = append(stuff, setTok{r: '-', sep: true})
			}
			for _, r := range ch {
				stuff = append(stuff, setTok{r: r})
			}
		}
	}

	switch {
	case len(stuff) == 0:
		return globTok{op: opNever}, next, true // "(?!)"
	case len(stuff) == 1 && !stuff[0].sep && stuff[0].r == '!':
		return globTok{op: opAny}, next, true // "." under DOTALL
	}
	cls := &charClass{}
	if !stuff[0].sep && stuff[0].r == '!' {
		cls.negate = true // translate writes '^'
		stuff = stuff[1:]
	}
	// The rest is read as sre_parse reads a set body. A leading '^' or '['
	// was escaped by translate, so every token is a member except the range
	// separators; a separator in first position (right after the '^') is
	// read as a literal '-', since sre_parse only sees a range after an item.
	for k := 0; k < len(stuff); {
		this := stuff[k]
		k++
		if k+1 < len(stuff) && stuff[k].sep {
			cls.ranges = append(cls.ranges, runeRange{lo: this.r, hi: stuff[k+1].r})
			k += 2
			continue
		}
		cls.runes = append(cls.runes, this.r)
	}
	return globTok{op: opClass, class: cls}, next, true
}

func indexRune(s []rune, r rune, from, to int) int {
	for k := from; k < to; k++ {
		if s[k] == r {
			return k
		}
	}
	return -1
}

// match reports whether the whole of text matches the pattern.
func (g *glob) match(text string) bool {
	if g.never {
		return false
	}
	if g.literal {
		return text == g.text
	}
	toks := g.toks
	// Iterative matching with one backtrack point at the last star: each
	// token other than a star consumes exactly one character, so trying the
	// earliest continuation after each star is complete (the same argument
	// that lets CPython use atomic groups).
	ti, pos := 0, 0
	starTi, starPos := -1, 0
	for {
		if ti < len(toks) {
			t := &toks[ti]
			if t.op == opStar {
				starTi, starPos = ti, pos
				ti++
				continue
			}
			if pos < len(text) {
				r, size := utf8.DecodeRuneInString(text[pos:])
				ok := false
				switch t.op {
				case opLit:
					ok = r == t.r
				case opAny:
					ok = true
				case opClass:
					ok = t.class.contains(r)
				}
				if ok {
					ti++
					pos += size
					continue
				}
			}
		} else if pos == len(text) || starTi == len(toks)-1 {
			return true // all consumed, or a trailing star takes the rest
		}
		if starTi < 0 || starPos >= len(text) {
			return false
		}
		_, size := utf8.DecodeRuneInString(text[starPos:])
		starPos += size
		ti, pos = starTi+1, starPos
	}
}

// fnmatchRule is one LionAGI rule pattern with its two compiled forms.
type fnmatchRule struct {
	pattern string
	any     bool // the pattern "*": always matches, whatever the text
	exact   *glob
	lower   *glob // the lower-cased pattern, or nil when it equals exact
}

func newRule(pattern string) fnmatchRule {
	r := fnmatchRule{pattern: pattern, any: pattern == "*"}
	if r.any {
		return r
	}
	r.exact = compileGlob(pattern)
	if lp := pyLower(pattern); lp != pattern {
		r.lower = compileGlob(lp)
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
	if r.exact.match(text) {
		return true
	}
	if !*haveLower {
		*lowered = pyLower(text)
		*haveLower = true
	}
	return r.lower.match(*lowered)
}
