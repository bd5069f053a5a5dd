package fnmatch

import "unicode/utf8"

type op uint8

const (
	opLit   op = iota // one literal character
	opAny             // '?', or a negated empty set: any one character
	opClass           // a character set
	opStar            // any run of characters
	opNever           // an empty set, "(?!)" in Python: matches nothing
)

type token struct {
	op    op
	r     rune       // opLit
	class *charClass // opClass
}

// Pattern is a compiled fnmatch pattern. It is immutable: Match may be
// called from any number of goroutines. The zero value matches only "".
type Pattern struct {
	toks []token
	// never is set when the pattern holds an empty set ("[z-a]"), which
	// Python translates to "(?!)": nothing matches.
	never bool
	// literal is set when the pattern has no wildcard: Match is ==.
	literal bool
	text    string
}

// Compile compiles an fnmatch pattern. Every string is a valid pattern.
func Compile(pattern string) *Pattern {
	pat := []rune(pattern)
	p := &Pattern{}
	n := len(pat)
	for i := 0; i < n; {
		c := pat[i]
		i++
		switch c {
		case '*':
			if len(p.toks) == 0 || p.toks[len(p.toks)-1].op != opStar {
				p.toks = append(p.toks, token{op: opStar})
			}
		case '?':
			p.toks = append(p.toks, token{op: opAny})
		case '[':
			tok, next, ok := compileSet(pat, i)
			if !ok {
				p.toks = append(p.toks, token{op: opLit, r: '['})
				continue
			}
			i = next
			if tok.op == opNever {
				p.never = true
				continue
			}
			p.toks = append(p.toks, tok)
		default:
			p.toks = append(p.toks, token{op: opLit, r: c})
		}
	}
	p.literal = true
	for _, t := range p.toks {
		if t.op != opLit {
			p.literal = false
			break
		}
	}
	if p.literal {
		p.text = pattern
	}
	return p
}

// Match reports whether the whole of text matches the pattern, as
// fnmatch.fnmatchcase(text, pattern) does. text is read as UTF-8; an invalid
// byte is one character (utf8.RuneError).
func (p *Pattern) Match(text string) bool {
	if p.never {
		return false
	}
	if p.literal {
		return text == p.text
	}
	toks := p.toks
	// NB: one backtrack point, at the last star, is enough: every token
	// other than a star consumes exactly one character, so trying the
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
				r, size := rune(text[pos]), 1
				if r >= utf8.RuneSelf {
					r, size = utf8.DecodeRuneInString(text[pos:])
				}
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
		} else if pos == len(text) || (starTi >= 0 && starTi == len(toks)-1) {
			return true // all consumed, or a trailing star takes the rest
		}
		if starTi < 0 || starPos >= len(text) {
			return false
		}
		if text[starPos] < utf8.RuneSelf {
			starPos++
		} else {
			_, size := utf8.DecodeRuneInString(text[starPos:])
			starPos += size
		}
		ti, pos = starTi+1, starPos
	}
}
