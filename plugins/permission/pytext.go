package permission

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file renders JSON values as Python 3 renders the objects json.loads
// makes of them, and lower-cases text as Python's str.lower does. LionAGI
// builds its match strings with str() and compares with lower(); a port must
// produce the same text.

// pyStr is Python's str(v) for a value decoded by json.loads: a string is
// itself; true/false/null are True/False/None; an integer is its decimal
// digits; a float is repr(float); arrays and objects are str(list) and
// str(dict), whose elements are repr()'d.
func pyStr(v *value) string {
	if v.kind == kindString {
		return v.s
	}
	var b strings.Builder
	pyReprTo(&b, v)
	return b.String()
}

// pyRepr is Python's repr(v).
func pyRepr(v *value) string {
	var b strings.Builder
	pyReprTo(&b, v)
	return b.String()
}

func pyReprTo(b *strings.Builder, v *value) {
	switch v.kind {
	case kindNull:
		b.WriteString("None")
	case kindBool:
		if v.b {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case kindNumber:
		b.WriteString(pyNumber(v.s))
	case kindString:
		pyQuoteTo(b, v.s)
	case kindArray:
		b.WriteByte('[')
		for i := range v.arr {
			if i > 0 {
				b.WriteString(", ")
			}
			pyReprTo(b, &v.arr[i])
		}
		b.WriteByte(']')
	case kindObject:
		b.WriteByte('{')
		for i := range v.obj {
			if i > 0 {
				b.WriteString(", ")
			}
			pyQuoteTo(b, v.obj[i].key)
			b.WriteString(": ")
			pyReprTo(b, &v.obj[i].val)
		}
		b.WriteByte('}')
	}
}

// pyNumber renders a JSON number literal as Python prints what json.loads
// makes of it: a literal with '.', 'e' or 'E' is a float (repr), any other is
// an int (exact, any size).
func pyNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if lit == "-0" {
			return "0"
		}
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return lit // unreachable for a valid JSON number
	}
	return pyFloatRepr(f)
}

// pyFloatRepr is Python's repr(float): the shortest digits that round-trip,
// in positional notation when the decimal exponent is in [-4, 16), else in
// scientific notation with at least two exponent digits; integral values keep
// ".0".
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // "-d.ddde±XX"
	neg := false
	if e[0] == '-' {
		neg = true
		e = e[1:]
	}
	mant, expPart, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expPart)
	decpt := exp + 1 // position of the decimal point relative to digits
	var out strings.Builder
	if neg {
		out.WriteByte('-')
	}
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			out.WriteString("0.")
			out.WriteString(strings.Repeat("0", -decpt))
			out.WriteString(digits)
		case decpt >= len(digits):
			out.WriteString(digits)
			out.WriteString(strings.Repeat("0", decpt-len(digits)))
			out.WriteString(".0")
		default:
			out.WriteString(digits[:decpt])
			out.WriteByte('.')
			out.WriteString(digits[decpt:])
		}
		return out.String()
	}
	out.WriteByte(digits[0])
	if len(digits) > 1 {
		out.WriteByte('.')
		out.WriteString(digits[1:])
	}
	out.WriteByte('e')
	x := decpt - 1
	if x < 0 {
		out.WriteByte('-')
		x = -x
	} else {
		out.WriteByte('+')
	}
	if x < 10 {
		out.WriteByte('0')
	}
	out.WriteString(strconv.Itoa(x))
	return out.String()
}

// pyQuote is Python's repr(str).
func pyQuote(s string) string {
	var b strings.Builder
	pyQuoteTo(&b, s)
	return b.String()
}

func pyQuoteTo(b *strings.Builder, s string) {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	const hex = "0123456789abcdef"
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		case r < utf8.RuneSelf:
			b.WriteByte(byte(r))
		case unicode.IsPrint(r):
			// NB: Go's IsPrint (L, M, N, P, S and U+0020) is Python's
			// str.isprintable (everything except C* and Z* other than U+0020).
			b.WriteRune(r)
		case r <= 0xff:
			b.WriteString(`\x`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		case r <= 0xffff:
			b.WriteString(`\u`)
			for sh := 12; sh >= 0; sh -= 4 {
				b.WriteByte(hex[(r>>sh)&0xf])
			}
		default:
			b.WriteString(`\U`)
			for sh := 28; sh >= 0; sh -= 4 {
				b.WriteByte(hex[(r>>sh)&0xf])
			}
		}
	}
	b.WriteByte(quote)
}

// pyLower is Python's str.lower(): the full lower-case mapping, which differs
// from strings.ToLower in two places: U+0130 becomes "i\u0307", and a capital
// sigma in final position becomes U+03C2 (final small sigma).
func pyLower(s string) string {
	ascii := true
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			upper = true
		}
	}
	if ascii {
		if !upper {
			return s
		}
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	runes := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range runes {
		switch r {
		case 0x130:
			b.WriteString("i\u0307")
		case 0x3a3:
			b.WriteRune(lowerSigma(runes, i))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// lowerSigma applies Python's Final_Sigma rule (handle_capital_sigma): the
// sigma at i is final when a cased letter precedes it (skipping
// case-ignorable characters) and no cased letter follows it (skipping
// case-ignorable characters).
func lowerSigma(runes []rune, i int) rune {
	j := i - 1
	for j >= 0 && caseIgnorable(runes[j]) {
		j--
	}
	final := j >= 0 && cased(runes[j])
	if final {
		j = i + 1
		for j < len(runes) && caseIgnorable(runes[j]) {
			j++
		}
		final = j == len(runes) || !cased(runes[j])
	}
	if final {
		return 0x3c2
	}
	return 0x3c3
}

// cased is Unicode's Cased property: Lu, Ll, Lt, Other_Lowercase, Other_Uppercase.
func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm, Sk, and
// Word_Break MidLetter, MidNumLet and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2018, 0x2019, 0x2024, 0x2027,
		0xfe13, 0xfe52, 0xfe55, 0xff07, 0xff0e, 0xff1a:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
