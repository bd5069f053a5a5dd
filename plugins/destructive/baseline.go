package destructive

// LionAGI's _DESTRUCTIVE_PATTERNS, compiled there as one IGNORECASE regex
// and searched in the command. They are reported as MatchedRule.
const (
	ruleRmRf        = `\brm\s+-rf\b`
	ruleGitPush     = `\bgit\s+push\s+--force\b`
	ruleGitReset    = `\bgit\s+reset\s+--hard\b`
	ruleGitClean    = `\bgit\s+clean\s+-fd\b`
	ruleDropTable   = `\bdrop\s+table\b`
	ruleDropDB      = `\bdrop\s+database\b`
	ruleTruncate    = `\btruncate\s+table\b`
	ruleMkfs        = `\bmkfs\b`
	ruleDDIf        = `\bdd\s+if=`
	ruleRedirectDev = `>\s*/dev/sd[a-z]`
)

// LionRules lists LionAGI's ten patterns in their original order.
var LionRules = [...]string{
	ruleRmRf, ruleGitPush, ruleGitReset, ruleGitClean, ruleDropTable,
	ruleDropDB, ruleTruncate, ruleMkfs, ruleDDIf, ruleRedirectDev,
}

// ruleFamily maps each of LionRules to its family.
var ruleFamily = [...]int{
	famRm, famGitPush, famGitReset, famGitClean, famSQLDrop,
	famSQLDrop, famSQLTruncate, famMkfs, famDD, famBlock,
}

// baseline runs LionAGI's ten patterns over the folded image b, in one pass.
// It returns one bit per matched pattern (bit k = LionRules[k]). The same
// pass runs the extended SQL and redirection scans, whose families it
// reports in ext (bit f = family f).
func baseline(b []byte) (rules, ext uint16) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '>' {
			j := skipSpace(b, i+1)
			if hasAt(b, j, "/dev/sd") && j+7 < len(b) && isLower(b[j+7]) {
				rules |= 1 << 9
			} else if ext&(1<<famBlock) == 0 && redirectAt(b, i) {
				ext |= 1 << famBlock
			}
			continue
		}
		if !isLower(c) || (i > 0 && isWord(b[i-1])) {
			continue
		}
		switch c {
		case 'r':
			if hasAt(b, i, "rm") && seq(b, i, "rm", "-rf") {
				rules |= 1 << 0
			}
		case 'g':
			if !hasAt(b, i, "git") {
				continue
			}
			if seq(b, i, "git", "push", "--force") {
				rules |= 1 << 1
			}
			if seq(b, i, "git", "reset", "--hard") {
				rules |= 1 << 2
			}
			if seq(b, i, "git", "clean", "-fd") {
				rules |= 1 << 3
			}
		case 'd':
			if hasAt(b, i, "drop") {
				if seq(b, i, "drop", "table") {
					rules |= 1 << 4
				}
				if seq(b, i, "drop", "database") {
					rules |= 1 << 5
				}
				ext |= sqlAt(b, i)
			}
			// \bdd\s+if= : no boundary after "if=".
			if hasAt(b, i, "dd") {
				j := i + 2
				if k := skipSpace(b, j); k > j && hasAt(b, k, "if=") {
					rules |= 1 << 8
				}
			}
		case 't':
			if hasAt(b, i, "truncate") {
				if seq(b, i, "truncate", "table") {
					rules |= 1 << 6
				}
				ext |= sqlAt(b, i)
			}
		case 'm':
			if hasAt(b, i, "mkfs") && boundaryAt(b, i+4) {
				rules |= 1 << 7
			}
		}
	}
	return rules, ext
}

// seq matches words[0] \s+ words[1] ... \b at i, where i is already known to
// follow a word boundary.
func seq(b []byte, i int, words ...string) bool {
	for k, w := range words {
		if k > 0 {
			j := skipSpace(b, i)
			if j == i {
				return false
			}
			i = j
		}
		if !hasAt(b, i, w) {
			return false
		}
		i += len(w)
	}
	return boundaryAt(b, i)
}

// boundaryAt reports \b between b[i-1] (a word byte in every caller) and
// b[i].
func boundaryAt(b []byte, i int) bool { return i >= len(b) || !isWord(b[i]) }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// hasAt reports s at b[i]. NB: a plain loop, so it inlines and makes no
// runtime call; calls are expensive in a Go Wasm guest.
func hasAt(b []byte, i int, s string) bool {
	if i < 0 || len(b)-i < len(s) {
		return false
	}
	for k := 0; k < len(s); k++ {
		if b[i+k] != s[k] {
			return false
		}
	}
	return true
}
