package permission

import (
	"strings"

	"github.com/govhost/govhost/plugins/internal/fnmatch"
)

// The shell command reader of the coding family: it splits a command into
// simple commands the way a POSIX shell does (quotes, backslashes,
// separators, pipes, redirections, here-documents, $(…) and backquotes)
// without running or expanding anything, so the gate can tell a read-only
// command line ("ls -la", "go test ./... 2>&1 | tail -20") from one that
// may change something. It is a classifier, not a sandbox: what a program
// does with its arguments is only known for the programs a policy lists.

// simpleCommand is one simple command of a command line.
type simpleCommand struct {
	words []string // after quote removal; redirections removed
	// piped: the command reads a pipe from the previous one ("a | b").
	piped bool
	// assigns: it starts with VAR=value words (removed from words).
	assigns bool
}

// parsedLine is a command line read by parseCommandLine.
type parsedLine struct {
	commands []simpleCommand
	// words is every word of every command, nested ones included, for the
	// deny_words check (redirection targets included).
	words []string
	// writes: an output redirection to something other than /dev/null or
	// a file descriptor.
	writes bool
	// opaque: something the reader cannot judge (an unclosed quote or
	// substitution, a process substitution, a subshell or brace group).
	opaque bool
}

// parseCommandLine reads s. Nested command substitutions are read as
// command lines of their own and their commands appended, so a read-only
// line may contain "$(git rev-parse HEAD)" but not "$(rm x)".
func parseCommandLine(s string) parsedLine {
	var p parsedLine
	p.read(s, 0)
	return p
}

const maxNesting = 8

func (p *parsedLine) read(s string, depth int) {
	if depth > maxNesting {
		p.opaque = true
		return
	}
	var (
		cur      simpleCommand
		word     strings.Builder
		inWord   bool
		redirect bool // the next word is a redirection target
		redirOut bool // ... of an output redirection
		heredocs []string
	)
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		p.words = append(p.words, w)
		if redirect {
			redirect = false
			if redirOut && w != "/dev/null" && !isFD(w) {
				p.writes = true
			}
			return
		}
		if len(cur.words) == 0 && isAssignment(w) {
			cur.assigns = true
			return
		}
		cur.words = append(cur.words, w)
	}
	// endCommand ends the current simple command; piped says the next one
	// reads its output.
	endCommand := func(piped bool) {
		endWord()
		if redirect {
			p.opaque = true // a redirection without a target
			redirect = false
		}
		if len(cur.words) > 0 || cur.assigns {
			p.commands = append(p.commands, cur)
		}
		cur = simpleCommand{piped: piped}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					word.WriteByte(s[i+1])
					inWord = true
				}
				i += 2
				continue
			}
			i++
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				p.opaque = true
				return
			}
			word.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 2
			continue
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				switch {
				case s[j] == '\\' && j+1 < len(s):
					if strings.IndexByte("$`\"\\\n", s[j+1]) >= 0 {
						word.WriteByte(s[j+1])
					} else {
						word.WriteByte('\\')
						word.WriteByte(s[j+1])
					}
					j += 2
					continue
				case s[j] == '$' && j+1 < len(s) && s[j+1] == '(':
					n, ok := p.substitution(s, j+1, depth)
					if !ok {
						return
					}
					word.WriteString(s[j:n])
					j = n
					continue
				case s[j] == '`':
					n, ok := p.backquote(s, j, depth)
					if !ok {
						return
					}
					j = n
					continue
				}
				word.WriteByte(s[j])
				j++
			}
			if j >= len(s) {
				p.opaque = true
				return
			}
			inWord = true
			i = j + 1
			continue
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			n, ok := p.substitution(s, i+1, depth)
			if !ok {
				return
			}
			word.WriteString(s[i:n])
			inWord = true
			i = n
			continue
		case c == '`':
			n, ok := p.backquote(s, i, depth)
			if !ok {
				return
			}
			inWord = true
			i = n
			continue
		case c == ' ' || c == '\t':
			endWord()
		case c == '\n':
			endCommand(false)
			for _, delim := range heredocs {
				i = skipHeredoc(s, i+1, delim) - 1
			}
			heredocs = nil
		case c == ';':
			endCommand(false)
		case c == '&':
			if i+1 < len(s) && s[i+1] == '&' {
				endCommand(false)
				i += 2
				continue
			}
			if i+1 < len(s) && s[i+1] == '>' { // &> and &>> redirect both streams
				endWord()
				redirect, redirOut = true, true
				i += 2
				if i < len(s) && s[i] == '>' {
					i++
				}
				continue
			}
			endCommand(false) // background: the next command runs too
		case c == '|':
			if i+1 < len(s) && s[i+1] == '|' {
				endCommand(false)
				i += 2
				continue
			}
			endCommand(true)
		case c == '(' || c == ')' || c == '{' && !inWord && (i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n'):
			p.opaque = true // subshells and groups are not read
			return
		case c == '>' || c == '<':
			// A file-descriptor number just before belongs to the operator.
			if inWord && isFD(word.String()) {
				word.Reset()
				inWord = false
			} else {
				endWord()
			}
			if c == '<' && i+1 < len(s) && s[i+1] == '(' || c == '>' && i+1 < len(s) && s[i+1] == '(' {
				p.opaque = true // process substitution
				return
			}
			if c == '<' && i+1 < len(s) && s[i+1] == '<' {
				if i+2 < len(s) && s[i+2] == '<' { // here-string: a word of data
					redirect, redirOut = true, false
					i += 3
					continue
				}
				i += 2
				if i < len(s) && s[i] == '-' {
					i++
				}
				for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
					i++
				}
				start := i
				for i < len(s) && strings.IndexByte(" \t\n;&|<>()", s[i]) < 0 {
					i++
				}
				delim := strings.NewReplacer(`'`, "", `"`, "", `\`, "").Replace(s[start:i])
				if delim == "" {
					p.opaque = true
					return
				}
				heredocs = append(heredocs, delim)
				continue
			}
			out := c == '>'
			i++
			for i < len(s) && (s[i] == '>' || s[i] == '|' || s[i] == '&' && out) {
				if s[i] == '&' { // >&N duplicates a descriptor
					i++
					start := i
					for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '-') {
						i++
					}
					if i == start {
						redirect, redirOut = true, true
					}
					goto next
				}
				i++
			}
			redirect, redirOut = true, out
		next:
			continue
		default:
			word.WriteByte(c)
			inWord = true
		}
		i++
	}
	endCommand(false)
}

// substitution reads the $(…) whose "(" is at s[open]; it returns the index
// after the closing ")".
func (p *parsedLine) substitution(s string, open, depth int) (int, bool) {
	level, j := 0, open
	for j < len(s) {
		switch s[j] {
		case '\\':
			j += 2
			continue
		case '\'':
			end := strings.IndexByte(s[j+1:], '\'')
			if end < 0 {
				p.opaque = true
				return 0, false
			}
			j += end + 2
			continue
		case '(':
			level++
		case ')':
			level--
			if level == 0 {
				p.read(s[open+1:j], depth+1)
				return j + 1, true
			}
		}
		j++
	}
	p.opaque = true
	return 0, false
}

// backquote reads the `…` starting at s[open]; it returns the index after
// the closing backquote.
func (p *parsedLine) backquote(s string, open, depth int) (int, bool) {
	end := strings.IndexByte(s[open+1:], '`')
	if end < 0 {
		p.opaque = true
		return 0, false
	}
	p.read(s[open+1:open+1+end], depth+1)
	return open + end + 2, true
}

// skipHeredoc returns the index after the line that ends the here-document
// starting at s[from] (leading tabs allowed, as <<- strips them).
func skipHeredoc(s string, from int, delim string) int {
	for from < len(s) {
		end := strings.IndexByte(s[from:], '\n')
		line := s[from:]
		if end >= 0 {
			line = s[from : from+end]
		}
		if strings.TrimLeft(line, "\t") == delim {
			if end < 0 {
				return len(s)
			}
			return from + end + 1
		}
		if end < 0 {
			return len(s)
		}
		from += end + 1
	}
	return len(s)
}

func isFD(w string) bool {
	if w == "" || w == "-" {
		return w == "-"
	}
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// isAssignment reports NAME=value.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := w[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// commandRules is the "commands" section of the coding family.
type commandRules struct {
	readOnly   []readOnlyEntry
	denyWords  []*fnmatch.Pattern
	denySource []string
	pipeInto   map[string]bool
	otherwise  string
}

// readOnlyEntry is one read-only command prefix ("git status") and the
// words that disqualify it ("find" with "-delete").
type readOnlyEntry struct {
	text   string
	prefix []string
	forbid []string
}

// commandVerdict is how a command line classifies.
type commandVerdict struct {
	decision string // abi decision
	code     string
	detail   string
	rule     string
}

func (r *commandRules) classify(cmd string) commandVerdict {
	line := parseCommandLine(cmd)
	for _, w := range line.words {
		for i, pat := range r.denyWords {
			if pat.Match(w) {
				return commandVerdict{decision: "deny", code: CodeCommandSecretPath,
					detail: "the command names a protected path: " + pyQuote(w), rule: r.denySource[i]}
			}
		}
	}
	for _, c := range line.commands {
		if c.piped && len(c.words) > 0 && r.pipeInto[programName(c.words[0])] {
			return commandVerdict{decision: "deny", code: CodeCommandPipeToShell,
				detail: "the command pipes into an interpreter: " + pyQuote(c.words[0]), rule: c.words[0]}
		}
	}
	why := ""
	switch {
	case line.opaque:
		why = "the command line has a construct the gate does not read (subshell, group, process substitution or unclosed quote)"
	case line.writes:
		why = "the command redirects output to a file"
	case len(line.commands) == 0:
		why = "empty command"
	}
	var matched []string
	if why == "" {
		for _, c := range line.commands {
			e := r.readOnlyMatch(c)
			if e == nil {
				why = "not a read-only command: " + pyQuote(strings.Join(c.words, " "))
				if c.assigns {
					why = "a command with variable assignments is not read-only"
				}
				break
			}
			matched = append(matched, e.text)
		}
	}
	if why == "" {
		return commandVerdict{decision: "allow", code: CodeCommandReadOnly,
			detail: "read-only command", rule: strings.Join(matched, ", ")}
	}
	return commandVerdict{decision: r.otherwise, code: CodeCommandNotReadOnly, detail: why}
}

// readOnlyMatch finds the entry c matches: its words begin with the
// entry's prefix and none of its words is forbidden. git's --no-pager and
// -C DIR before the subcommand are skipped; an entry starting with sed
// also needs a print-only script (sedPrintOnly).
func (r *commandRules) readOnlyMatch(c simpleCommand) *readOnlyEntry {
	if c.assigns || len(c.words) == 0 {
		return nil
	}
	words := c.words
	if words[0] == "git" {
		rest := words[1:]
		for len(rest) > 0 {
			switch {
			case rest[0] == "--no-pager":
				rest = rest[1:]
				continue
			case rest[0] == "-C" && len(rest) > 1:
				rest = rest[2:]
				continue
			}
			break
		}
		words = append([]string{"git"}, rest...)
	}
	for i := range r.readOnly {
		e := &r.readOnly[i]
		if len(words) < len(e.prefix) {
			continue
		}
		ok := true
		for j, w := range e.prefix {
			if words[j] != w {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for _, w := range words[len(e.prefix):] {
			for _, f := range e.forbid {
				if w == f || strings.HasPrefix(f, "-") && strings.HasPrefix(w, f+"=") {
					ok = false
				}
			}
		}
		if ok && e.prefix[0] == "sed" && !sedPrintOnly(words[len(e.prefix):]) {
			ok = false
		}
		if ok {
			return e
		}
	}
	return nil
}

// sedPrintOnly reports a sed invocation (after the entry's words) whose
// script only prints lines ("1,200p", "10p", "$p"), followed by file
// operands: sed's w, r and e commands write files and run programs, so a
// read-only sed entry admits nothing else.
func sedPrintOnly(rest []string) bool {
	if len(rest) == 0 {
		return false
	}
	script := rest[0]
	if len(script) < 2 || script[len(script)-1] != 'p' {
		return false
	}
	for i := 0; i < len(script)-1; i++ {
		if c := script[i]; !(c >= '0' && c <= '9' || c == ',' || c == '$') {
			return false
		}
	}
	for _, w := range rest[1:] {
		if strings.HasPrefix(w, "-") {
			return false
		}
	}
	return true
}

// programName is the last path component of a command word (/bin/sh → sh).
func programName(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}
