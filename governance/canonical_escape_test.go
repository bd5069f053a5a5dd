package governance

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// appendEscapedReference is the record escaper before it scanned eight
// bytes at a time: one byte per step.
func appendEscapedReference(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// escapedAsEncodingJSON is what encoding/json writes for s (HTML escaping
// off), except U+2028 and U+2029, which Python's ensure_ascii=False writes
// raw: rune by rune, so a backslash in s is never taken for an escape.
func escapedAsEncodingJSON(t *testing.T, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r == '\u2028' || r == '\u2029' {
			b.WriteRune(r)
			continue
		}
		var out strings.Builder
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(string(r)); err != nil {
			t.Fatal(err)
		}
		q := strings.TrimSuffix(out.String(), "\n")
		b.WriteString(q[1 : len(q)-1])
	}
	b.WriteByte('"')
	return b.String()
}

var escapeSeeds = []string{
	"", "plain", `"`, `\`, "\x00\x01\x1f\x7f", "\b\f\n\r\t", "a\"b\\c\nd", "é中🚀", "\u2028\u2029",
	"<script>&amp;</script>", strings.Repeat("x", 7) + `"` + strings.Repeat("y", 9), strings.Repeat("\x1f", 17),
	"12345678\"", "1234567\x00", `\u2028`, "\xff\xfe", "\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8",
}

func sameEscapeAsTheReference(t *testing.T, s string) {
	t.Helper()
	got := appendEscaped([]byte("prefix"), s)
	if want := appendEscapedReference([]byte("prefix"), s); string(got) != string(want) {
		t.Fatalf("%q: escaped %q, byte by byte %q", s, got, want)
	}
	if b := appendEscaped(nil, []byte(s)); string(b) != string(got[len("prefix"):]) {
		t.Fatalf("%q: the []byte form differs from the string form", s)
	}
	if !utf8.ValidString(s) {
		return // the callers check text first; encoding/json would write U+FFFD
	}
	if want := escapedAsEncodingJSON(t, s); string(got[len("prefix"):]) != want {
		t.Fatalf("%q: escaped %q, encoding/json %q", s, got[len("prefix"):], want)
	}
	var back string
	if err := json.Unmarshal(got[len("prefix"):], &back); err != nil || back != s {
		t.Fatalf("%q: read back as %q (%v)", s, back, err)
	}
}

// TestAppendEscaped_SameAsTheReference: the record escaper writes what the
// byte-at-a-time escaper wrote, and what encoding/json writes but for the
// two line separators (raw, as Python).
func TestAppendEscaped_SameAsTheReference(t *testing.T) {
	for _, s := range escapeSeeds {
		for cut := 0; cut <= len(s); cut++ { // every alignment of the special bytes
			sameEscapeAsTheReference(t, s[cut:])
			sameEscapeAsTheReference(t, strings.Repeat("a", cut)+s)
		}
	}
	for c := 0; c < 256; c++ {
		for at := 0; at < 16; at++ {
			b := []byte(strings.Repeat("z", 16))
			b[at] = byte(c)
			sameEscapeAsTheReference(t, string(b))
		}
	}
}

func FuzzAppendEscaped_SameAsEncodingJSON(f *testing.F) {
	for _, s := range escapeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { sameEscapeAsTheReference(t, s) })
}
