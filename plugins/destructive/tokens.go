package destructive

import (
	"bytes"
	"path"
)

// span is a token: norm[start:end].
type span struct{ start, end int32 }

// isSep reports a byte that ends a command: ; & | newline ( ) and backtick
// (so "$(...)" and "`...`" start a new command too).
func isSep(c byte) bool { return class[c]&clSep != 0 }

// isBreak reports a byte that ends a token without ending the command:
// whitespace and the redirection operators.
func isBreak(c byte) bool { return class[c]&clBreak != 0 }

// extended runs the token scan that catches what LionAGI's regex list
// misses (the SQL and redirection scans run inside baseline's pass). It
// returns one bit per matched family. It rewrites b in place: each token is
// compacted, without its quotes and backslashes, at or before its source
// position, so b must not be used afterwards.
func extended(b []byte) uint16 {
	var (
		mask   uint16
		tokBuf [16]span
		toks   = tokBuf[:0]
		w      int // write position of the compacted tokens of this command
	)
	for i := 0; i <= len(b); {
		if i == len(b) || isSep(b[i]) {
			if len(toks) > 0 {
				mask |= scanCommand(b, toks)
			}
			toks = toks[:0]
			i++
			w = i
			continue
		}
		if isBreak(b[i]) {
			i++
			continue
		}
		// NB: quotes and backslashes are dropped inside a token, so r'm',
		// "rm" and \rm all read rm; there is no other shell parsing.
		start := w
		for ; i < len(b); i++ {
			c := b[i]
			cl := class[c]
			if cl&(clSep|clBreak) != 0 {
				break
			}
			if cl&clQuote == 0 {
				b[w] = c
				w++
			}
		}
		if w > start {
			toks = append(toks, span{int32(start), int32(w)})
		}
	}
	return mask
}

// scanCommand checks the tokens of one command (between separators).
func scanCommand(norm []byte, toks []span) uint16 {
	var mask uint16
	tok := func(k int) []byte { return norm[toks[k].start:toks[k].end] }
	for k := range toks {
		t := tok(k)
		if hasAt(t, 0, "of=") && isBlockDevice(t[3:]) {
			mask |= 1 << famBlock
		}
		name := t
		for j := len(t) - 1; j >= 0; j-- {
			if t[j] == '/' {
				name = t[j+1:]
				break
			}
		}
		if len(name) < 2 {
			continue
		}
		switch name[0] {
		case 'r', 'g', 'd', 't', 'm', 'n':
		default:
			continue // no command below starts otherwise
		}
		switch {
		case eq(name, "rm"):
			if rmRecursiveForce(norm, toks[k+1:]) {
				mask |= 1 << famRm
			}
		case eq(name, "git"):
			mask |= gitScan(norm, toks[k+1:])
		case eq(name, "dd"):
			for _, s := range toks[k+1:] {
				if hasAt(norm[s.start:s.end], 0, "if=") {
					mask |= 1 << famDD
				}
			}
		case eq(name, "tee"):
			for _, s := range toks[k+1:] {
				if isBlockDevice(norm[s.start:s.end]) {
					mask |= 1 << famBlock
				}
			}
		case isMkfsName(name):
			mask |= 1 << famMkfs
		}
	}
	return mask
}

// rmRecursiveForce reports a recursive and a force flag among rm's
// arguments, in any spelling: clusters (-rf, -fr, -Rfv), separate flags, and
// GNU long options or their unambiguous prefixes (--recursive, --rec,
// --force, --f).
func rmRecursiveForce(norm []byte, args []span) bool {
	var rec, force bool
	for _, s := range args {
		a := norm[s.start:s.end]
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		if a[1] == '-' {
			name := longName(a)
			rec = rec || isPrefixOf(name, "recursive")
			force = force || isPrefixOf(name, "force")
		} else {
			for _, c := range a[1:] {
				if !isLower(c) && !isDigit(c) {
					break
				}
				rec = rec || c == 'r'
				force = force || c == 'f'
			}
		}
		if rec && force {
			return true
		}
	}
	return false
}

// gitScan finds git's subcommand after its global options and checks the
// forcing forms of push, reset and clean.
func gitScan(norm []byte, args []span) uint16 {
	j := 0
	for j < len(args) {
		a := norm[args[j].start:args[j].end]
		if a[0] != '-' {
			break
		}
		j++
		if eq(a, "-c") || eq(a, "--git-dir") || eq(a, "--work-tree") || eq(a, "--namespace") ||
			eq(a, "--super-prefix") || eq(a, "--config-env") {
			j++ // the option's value (folding made -C and -c alike)
		}
	}
	if j >= len(args) {
		return 0
	}
	sub, rest := norm[args[j].start:args[j].end], args[j+1:]
	switch {
	case eq(sub, "push"):
		for _, s := range rest {
			if forcePushArg(norm[s.start:s.end]) {
				return 1 << famGitPush
			}
		}
	case eq(sub, "reset"):
		for _, s := range rest {
			a := norm[s.start:s.end]
			if len(a) > 2 && a[0] == '-' && a[1] == '-' && isPrefixOf(longName(a), "hard") {
				return 1 << famGitReset
			}
		}
	case eq(sub, "clean"):
		var force, dir bool
		for _, s := range rest {
			a := norm[s.start:s.end]
			switch {
			case len(a) > 2 && a[0] == '-' && a[1] == '-':
				force = force || isPrefixOf(longName(a), "force")
			case len(a) > 1 && a[0] == '-':
				force = force || bytes.IndexByte(a[1:], 'f') >= 0
				dir = dir || bytes.IndexByte(a[1:], 'd') >= 0
			}
			if force && dir {
				return 1 << famGitClean
			}
		}
	}
	return 0
}

// forcePushArg reports a git push argument that forces: -f in any cluster,
// any long option starting --for (--force, --force-with-lease[=...],
// --force-if-includes and their prefixes), or a +refspec.
func forcePushArg(a []byte) bool {
	switch {
	case len(a) > 1 && a[0] == '+':
		return true
	case bytes.HasPrefix(a, []byte("--")):
		return bytes.HasPrefix(longName(a), []byte("for"))
	case len(a) > 1 && a[0] == '-':
		return bytes.IndexByte(a[1:], 'f') >= 0
	}
	return false
}

// eq reports a == s without a runtime call.
func eq(a []byte, s string) bool { return len(a) == len(s) && hasAt(a, 0, s) }

// longName returns a long option's name: "--force=x" → "force".
func longName(a []byte) []byte {
	a = a[2:]
	if i := bytes.IndexByte(a, '='); i >= 0 {
		a = a[:i]
	}
	return a
}

// isPrefixOf reports a non-empty prefix of word, as getopt_long and git
// accept abbreviated long options.
func isPrefixOf(p []byte, word string) bool {
	return len(p) > 0 && len(p) <= len(word) && string(p) == word[:len(p)]
}

// isMkfsName reports a filesystem-creating program: mkfs in any form
// (mkfs, mkfs.ext4, mkfs.xfs, ...), its relatives, and BSD newfs
// (newfs, newfs_msdos).
func isMkfsName(name []byte) bool {
	for _, p := range [...]string{"mkfs", "newfs"} {
		if bytes.HasPrefix(name, []byte(p)) && (len(name) == len(p) || !isLower(name[len(p)])) {
			return true
		}
	}
	switch string(name) {
	case "mke2fs", "mkdosfs", "mkntfs", "mkexfatfs", "mkswap":
		return true
	}
	return false
}

// blockDevicePrefixes follow "/dev/". The first four need a drive letter.
var blockDevicePrefixes = [...]string{
	"sd", "hd", "vd", "xvd",
	"nvme", "mmcblk", "disk", "rdisk", "md", "dm-", "mapper/", "loop", "nbd",
	"zd", "rbd", "root", "block/",
}

// isBlockDevice reports a path naming a disk-like block device, after
// lexical cleaning (so /dev//sda and /dev/./sda count).
func isBlockDevice(p []byte) bool {
	if len(p) < 6 || p[0] != '/' || bytes.Index(p, []byte("dev")) < 0 {
		return false
	}
	s := path.Clean(string(p))
	if len(s) < 6 || s[:5] != "/dev/" {
		return false
	}
	s = s[5:]
	for k, pre := range blockDevicePrefixes {
		if len(s) < len(pre) || s[:len(pre)] != pre {
			continue
		}
		if k < 4 {
			return len(s) > len(pre) && isLower(s[len(pre)])
		}
		return true
	}
	return false
}

// redirectAt reports an output redirection at b[i] == '>' (>, >>, >|, &>,
// >&, <>) onto a block device. Quotes and backslashes in the target are
// dropped, as in tokens.
func redirectAt(b []byte, i int) bool {
	j := i + 1
	for j < len(b) && (b[j] == '>' || b[j] == '|' || b[j] == '&') {
		j++
	}
	for j < len(b) && isSpace(b[j]) {
		j++
	}
	var buf [64]byte
	target := buf[:0]
	for ; j < len(b); j++ {
		cl := class[b[j]]
		if cl&(clSep|clBreak) != 0 {
			break
		}
		if cl&clQuote == 0 {
			target = append(target, b[j])
		}
	}
	return isBlockDevice(target)
}

// sqlAt reports DROP [TEMPORARY] TABLE|DATABASE|SCHEMA or TRUNCATE TABLE
// at i (which follows a word boundary), with whitespace or SQL comments
// between the words.
func sqlAt(b []byte, i int) uint16 {
	if word(b, i, "drop") {
		j := sqlGap(b, i+4)
		if j < 0 {
			return 0
		}
		if word(b, j, "temporary") {
			if j = sqlGap(b, j+9); j < 0 {
				return 0
			}
		}
		if word(b, j, "table") || word(b, j, "database") || word(b, j, "schema") {
			return 1 << famSQLDrop
		}
	} else if word(b, i, "truncate") {
		if j := sqlGap(b, i+8); j >= 0 && word(b, j, "table") {
			return 1 << famSQLTruncate
		}
	}
	return 0
}

// word reports w at i followed by a word boundary.
func word(b []byte, i int, w string) bool { return hasAt(b, i, w) && boundaryAt(b, i+len(w)) }

// sqlGap skips at least one run of whitespace or SQL comments (/* */, --,
// #) from i and returns the next position, or -1 when there is none.
func sqlGap(b []byte, i int) int {
	start := i
	for i < len(b) {
		switch {
		case isSpace(b[i]):
			i++
		case hasAt(b, i, "/*"):
			end := bytes.Index(b[i+2:], []byte("*/"))
			if end < 0 {
				return -1
			}
			i += 2 + end + 2
		case hasAt(b, i, "--") || b[i] == '#':
			end := bytes.IndexByte(b[i:], '\n')
			if end < 0 {
				return -1
			}
			i += end + 1
		default:
			if i == start {
				return -1
			}
			return i
		}
	}
	return -1
}
