package pathguard

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/govhost/govhost/abi"
)

// deniedMessage renders AgentLane's format_tool_permission_result for a
// deny without a reason: the subject is the path in backticks, else "this
// command" when the request carries a command (even an empty one), else
// none.
func deniedMessage(tool, pathSubject string, in *abi.GateInput) string {
	switch {
	case pathSubject != "":
		return "permission denied: " + tool + " is not allowed for `" + pathSubject + "`"
	case hasCommand(in):
		return "permission denied: " + tool + " is not allowed for this command"
	default:
		return "permission denied: " + tool + " is not allowed"
	}
}

// hasCommand reports a "command" member in the arguments (AgentLane's
// request.command is not None).
func hasCommand(in *abi.GateInput) bool {
	if len(in.Arguments) == 0 || !strings.Contains(string(in.Arguments), `"command"`) {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(in.Arguments, &m) != nil {
		return false
	}
	v, ok := m["command"]
	return ok && string(v) != "null"
}

// protectedNames are LionAGI's path_safety.DENIED_NAMES, already case-folded.
var protectedNames = [...]string{".env", ".netrc", "id_rsa", "id_ed25519", "id_ecdsa", ".htpasswd"}

// isProtectedName reports a protected basename, comparing Python
// str.casefold() forms: ASCII case, and the non-ASCII characters whose
// folding lands on an ASCII letter (ſ → s, Kelvin sign → k, ß → ss, the st
// ligatures → st).
func isProtectedName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	var buf [96]byte
	folded := buf[:0]
	for _, r := range name {
		switch {
		case r < utf8.RuneSelf:
			folded = append(folded, byte(unicode.ToLower(r)))
		case r == 'ß' || r == 'ẞ':
			folded = append(folded, 's', 's')
		case r == 0xfb05 || r == 0xfb06: // ﬅ ﬆ
			folded = append(folded, 's', 't')
		default:
			f := asciiFold(r)
			if f == 0 {
				return false // a rune no protected name contains
			}
			folded = append(folded, f)
		}
	}
	for _, p := range protectedNames {
		if string(folded) == p {
			return true
		}
	}
	return false
}

// asciiFold returns the lower-case ASCII letter in r's simple case-folding
// orbit, or 0.
func asciiFold(r rune) byte {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return byte(unicode.ToLower(f))
		}
	}
	return 0
}

// pyRepr renders s as Python's repr() of a str does.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
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
		case r == ' ' || (unicode.IsPrint(r) && r != utf8.RuneError):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pathlibStr renders a path the way str(pathlib.PurePosixPath(p)) does:
// repeated and trailing slashes and "." components are dropped, ".." is
// kept.
func pathlibStr(p string) string {
	if p == "" {
		return "."
	}
	var parts []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			parts = append(parts, c)
		}
	}
	out := strings.Join(parts, "/")
	if strings.HasPrefix(p, "/") {
		if strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///") {
			return "//" + out
		}
		return "/" + out
	}
	if out == "" {
		return "."
	}
	return out
}
