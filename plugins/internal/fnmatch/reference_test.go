package fnmatch_test

import (
	"fmt"
	"regexp"
	"strings"
)

// An independent reference for the fnmatch matcher: a line-by-line port of
// CPython 3.11's fnmatch.translate producing the same regular expression
// text, and a converter from that (small) subset of Python's regex syntax to
// Go's, reading character sets as sre_parse does. It shares no code with
// the matcher (fnmatch.go, set.go).

// pyTranslate is fnmatch.translate.
func pyTranslate(pattern string) string {
	pat := []rune(pattern)
	const star = "\x00STAR"
	var res []string
	i, n := 0, len(pat)
	for i < n {
		c := pat[i]
		i++
		switch {
		case c == '*':
			if len(res) == 0 || res[len(res)-1] != star {
				res = append(res, star)
			}
		case c == '?':
			res = append(res, ".")
		case c == '[':
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
				res = append(res, `\[`)
				continue
			}
			var stuff string
			if !strings.ContainsRune(string(pat[i:j]), '-') {
				stuff = strings.ReplaceAll(string(pat[i:j]), `\`, `\\`)
			} else {
				var chunks []string
				k := i + 1
				if pat[i] == '!' {
					k = i + 2
				}
				for {
					k = findRune(pat, '-', k, j)
					if k < 0 {
						break
					}
					chunks = append(chunks, string(pat[i:k]))
					i = k + 1
					k = k + 3
				}
				chunk := string(pat[i:j])
				if chunk != "" {
					chunks = append(chunks, chunk)
				} else {
					chunks[len(chunks)-1] += "-"
				}
				for k := len(chunks) - 1; k > 0; k-- {
					prev, cur := []rune(chunks[k-1]), []rune(chunks[k])
					if prev[len(prev)-1] > cur[0] {
						chunks[k-1] = string(prev[:len(prev)-1]) + string(cur[1:])
						chunks = append(chunks[:k], chunks[k+1:]...)
					}
				}
				esc := make([]string, len(chunks))
				for x, s := range chunks {
					esc[x] = strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "-", `\-`)
				}
				stuff = strings.Join(esc, "-")
			}
			var b strings.Builder
			for _, r := range stuff {
				if r == '&' || r == '~' || r == '|' {
					b.WriteByte('\\')
				}
				b.WriteRune(r)
			}
			stuff = b.String()
			i = j + 1
			switch {
			case stuff == "":
				res = append(res, "(?!)")
			case stuff == "!":
				res = append(res, ".")
			default:
				if stuff[0] == '!' {
					stuff = "^" + stuff[1:]
				} else if stuff[0] == '^' || stuff[0] == '[' {
					stuff = `\` + stuff
				}
				res = append(res, "["+stuff+"]")
			}
		default:
			res = append(res, pyReEscape(c))
		}
	}
	// Deal with stars.
	var out strings.Builder
	i, n = 0, len(res)
	for i < n && res[i] != star {
		out.WriteString(res[i])
		i++
	}
	for i < n {
		i++ // star
		if i == n {
			out.WriteString(".*")
			break
		}
		var fixed strings.Builder
		for i < n && res[i] != star {
			fixed.WriteString(res[i])
			i++
		}
		if i == n {
			out.WriteString(".*")
			out.WriteString(fixed.String())
		} else {
			out.WriteString("(?>.*?" + fixed.String() + ")")
		}
	}
	return "(?s:" + out.String() + `)\Z`
}

func findRune(s []rune, r rune, from, to int) int {
	for k := from; k < to; k++ {
		if s[k] == r {
			return k
		}
	}
	return -1
}

// pyReEscape is re.escape for one character.
func pyReEscape(c rune) string {
	if strings.ContainsRune("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", c) {
		return `\` + string(c)
	}
	return string(c)
}

// pyRegexToGo converts the output of pyTranslate to Go regexp syntax.
func pyRegexToGo(rx string) (string, error) {
	const head, tail = "(?s:", `)\Z`
	if !strings.HasPrefix(rx, head) || !strings.HasSuffix(rx, tail) {
		return "", fmt.Errorf("unexpected translation %q", rx)
	}
	src := []rune(rx[len(head) : len(rx)-len(tail)])
	var b strings.Builder
	b.WriteString(`^(?s:`)
	lit := func(r rune) { fmt.Fprintf(&b, `\x{%x}`, r) }
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(string(src[i:]), "(?>"):
			b.WriteString("(?:")
			i += 3
		case strings.HasPrefix(string(src[i:]), "(?!)"):
			b.WriteString(`[^\x00-\x{10ffff}]`)
			i += 4
		case src[i] == ')' || src[i] == '.' || src[i] == '*' || src[i] == '?':
			b.WriteRune(src[i])
			i++
		case src[i] == '\\':
			lit(src[i+1])
			i += 2
		case src[i] == '[':
			next, err := convertSet(&b, src, i+1)
			if err != nil {
				return "", err
			}
			i = next
		default:
			lit(src[i])
			i++
		}
	}
	b.WriteString(`)\z`)
	return b.String(), nil
}

// convertSet reads a Python character set body starting at src[i] (after
// '[') the way sre_parse does and writes it as a Go class.
func convertSet(b *strings.Builder, src []rune, i int) (int, error) {
	type item struct{ lo, hi rune }
	var items []item
	negate := false
	if i < len(src) && src[i] == '^' {
		negate = true
		i++
	}
	get := func() (rune, bool, bool) { // char, escaped, ok
		if i >= len(src) {
			return 0, false, false
		}
		if src[i] == '\\' {
			i += 2
			return src[i-1], true, true
		}
		i++
		return src[i-1], false, true
	}
	for {
		this, escaped, ok := get()
		if !ok {
			return 0, fmt.Errorf("unterminated set")
		}
		if this == ']' && !escaped && len(items) > 0 {
			break
		}
		if i < len(src) && src[i] == '-' {
			i++
			that, thatEscaped, ok := get()
			if !ok {
				return 0, fmt.Errorf("unterminated set")
			}
			if that == ']' && !thatEscaped {
				items = append(items, item{this, this}, item{'-', '-'})
				break
			}
			if that < this {
				return 0, fmt.Errorf("bad character range")
			}
			items = append(items, item{this, that})
			continue
		}
		items = append(items, item{this, this})
	}
	b.WriteByte('[')
	if negate {
		b.WriteByte('^')
	}
	for _, it := range items {
		fmt.Fprintf(b, `\x{%x}`, it.lo)
		if it.hi != it.lo {
			fmt.Fprintf(b, `-\x{%x}`, it.hi)
		}
	}
	b.WriteByte(']')
	return i, nil
}

// referenceMatch is fnmatch.fnmatchcase(text, pattern) through the
// reference translation.
func referenceMatch(pattern, text string) (bool, error) {
	goRx, err := pyRegexToGo(pyTranslate(pattern))
	if err != nil {
		return false, err
	}
	re, err := regexp.Compile(goRx)
	if err != nil {
		return false, fmt.Errorf("%q → %q: %w", pattern, goRx, err)
	}
	return re.MatchString(text), nil
}
