package abi

import "strconv"

// DisplayText returns guest-chosen text (a description, a message, an export
// name) fit for a terminal: unchanged when every character is printable and
// none is a backslash or a quote, otherwise Go-quoted (strconv.Quote), so
// that escape sequences, newlines, bidi overrides and invalid UTF-8 show as
// escapes and cannot clear a screen or forge a line of output. Every place
// where guest text reaches human output uses it.
func DisplayText(s string) string {
	for _, r := range s {
		if r == '\\' || r == '"' || !strconv.IsPrint(r) || r == 0xFFFD {
			return strconv.Quote(s)
		}
	}
	return s
}
