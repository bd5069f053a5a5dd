package fnmatch

// Sets follow CPython: fnmatch.translate rewrites the set into a regular
// expression and the re module (sre_parse) reads it back, so the odd corners
// of bracket parsing are those of translate followed by sre_parse.
// compileSet follows translate step by step and then reads the result as
// sre_parse would.

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

// setTok is one character of translate's "stuff" string for a set: a
// member character, or (sep) an unescaped '-' that joins two chunks into a
// range.
type setTok struct {
	r   rune
	sep bool
}

// compileSet reads the set whose '[' is at pat[i-1]. ok is false when the
// set is not closed (then '[' is a literal). The token's op is opClass,
// opAny (a negated empty set) or opNever (an empty set).
func compileSet(pat []rune, i int) (tok token, next int, ok bool) {
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
		return token{}, i, false
	}
	next = j + 1

	// translate: split at the hyphens that form ranges.
	var stuff []setTok
	if indexRune(pat, '-', i, j) < 0 {
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
		return token{op: opNever}, next, true // "(?!)"
	case len(stuff) == 1 && !stuff[0].sep && stuff[0].r == '!':
		return token{op: opAny}, next, true // "." under DOTALL
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
	return token{op: opClass, class: cls}, next, true
}

func indexRune(s []rune, r rune, from, to int) int {
	for k := from; k < to; k++ {
		if s[k] == r {
			return k
		}
	}
	return -1
}
