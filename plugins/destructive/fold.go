package destructive

import "unicode/utf8"

// placeholder stands for any other non-ASCII rune after folding: it is
// neither a word character nor whitespace.
const placeholder = 0x80

// fold appends to dst a byte-per-character image of cmd that the matchers
// work on:
//
//   - ASCII letters are lower-cased (LionAGI compiles with IGNORECASE);
//   - the non-ASCII letters Python's IGNORECASE equates with an ASCII letter
//     become that letter: U+017F ſ → s, U+212A Kelvin K → k, U+0130 İ and
//     U+0131 ı → i;
//   - every character Python's str-pattern \s matches becomes ' ', except
//     '\n', which is kept (it also separates commands);
//   - every other non-ASCII rune becomes placeholder.
//
// NB: treating non-ASCII word characters (é, 中) as non-word only ever adds
// \b positions next to the ASCII letters of a pattern, so the baseline scan
// can match more than Python's regex, never less.
func fold(cmd string, dst []byte) []byte {
	for i := 0; i < len(cmd); {
		c := cmd[i]
		if c < utf8.RuneSelf {
			dst = append(dst, foldASCII[c])
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(cmd[i:])
		i += size
		dst = append(dst, foldRune(r))
	}
	return dst
}

// foldJSON is fold applied to the decoded text of a JSON string literal
// (quotes included, escapes already validated by scanString): the command
// is folded without being decoded into a string first.
func foldJSON(lit []byte, dst []byte) []byte {
	body := lit[1 : len(lit)-1]
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\\':
			r, n := unescape(body, i)
			dst = append(dst, foldRune(r))
			i += n
		case c < utf8.RuneSelf:
			dst = append(dst, foldASCII[c])
			i++
		default:
			r, size := utf8.DecodeRune(body[i:])
			dst = append(dst, foldRune(r))
			i += size
		}
	}
	return dst
}

// foldASCII maps an ASCII byte to its folded image.
var foldASCII = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(c)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c) + 'a' - 'A'
	}
	for _, c := range "\t\v\f\r\x1c\x1d\x1e\x1f" {
		t[c] = ' '
	}
	return t
}()

// foldRune folds one non-ASCII rune (or an escaped one of any value).
func foldRune(r rune) byte {
	if r < utf8.RuneSelf {
		return foldASCII[r]
	}
	switch r {
	case 0x017f: // ſ LATIN SMALL LETTER LONG S
		return 's'
	case 0x212a: // KELVIN SIGN
		return 'k'
	case 0x0130, 0x0131: // İ, ı
		return 'i'
	case 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return ' '
	}
	if r >= 0x2000 && r <= 0x200a {
		return ' '
	}
	return placeholder
}

// Byte classes of the folded image.
const (
	clWord  = 1 << iota // \w: a-z 0-9 _
	clSpace             // \s: ' ' and '\n'
	clSep               // ends a command: ; & | newline ( ) backtick
	clBreak             // ends a token: ' ' < >
	clQuote             // dropped inside tokens: ' " backslash
)

var class = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= clWord
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= clWord
	}
	t['_'] |= clWord
	t[' '] |= clSpace | clBreak
	t['\n'] |= clSpace | clSep
	for _, c := range ";&|()`" {
		t[c] |= clSep
	}
	t['<'] |= clBreak
	t['>'] |= clBreak
	for _, c := range "'\"\\" {
		t[c] |= clQuote
	}
	return t
}()

// isWord reports a \w byte of the folded image.
func isWord(c byte) bool { return class[c]&clWord != 0 }

// isSpace reports a \s byte of the folded image.
func isSpace(c byte) bool { return class[c]&clSpace != 0 }

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
