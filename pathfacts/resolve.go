package pathfacts

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/govhost/govhost/abi"
)

// MaxSymlinks bounds the symlinks followed while resolving one path, like
// the kernel's MAXSYMLINKS (40 on Linux). Longer chains fail with
// ErrSymlinkLoop.
const MaxSymlinks = 40

// ResolveCwd returns the real absolute form of a working directory: "~" is
// expanded, an empty cwd means the process working directory, a relative
// one is joined to it, and symlinks are resolved like any path (a missing
// remainder is kept). Put the result in GateInput.Cwd and pass it to Resolve.
// Errors are *ArgError with Arg "cwd".
func ResolveCwd(cwd string) (string, error) {
	p, err := Canonical(cwd)
	if err != nil {
		return "", &ArgError{Arg: "cwd", Path: cwd, Err: err}
	}
	return p, nil
}

// Canonical returns the resolved form of p the way Resolve computes
// abi.PathFact.Resolved, relative to the process working directory. Policy
// tooling uses it to canonicalise pathguard roots and scopes, which a gate
// cannot resolve itself.
func Canonical(p string) (string, error) {
	// An absolute path needs no working directory: skip the Getwd and the
	// walk of the process's cwd (this runs for every governed call).
	// The empty path is the working directory itself, which Getwd returns
	// absolute: it is walked from "/" once, not resolved as a base first.
	base := "/"
	if p == "" || !path.IsAbs(expandUser(p)) {
		wd, err := workingDir()
		if err != nil {
			return "", err
		}
		if p == "" {
			p = wd
		} else if base, err = realBase(wd); err != nil {
			return "", err
		}
	}
	return resolvedFrom(base, p)
}

// ResolvePath resolves one path text against cwd (see ResolveCwd) and
// returns its fact with an empty Arg.
func ResolvePath(cwd, p string) (abi.PathFact, error) {
	base, err := ResolveCwd(cwd)
	if err != nil {
		return abi.PathFact{}, err
	}
	f, err := resolveFrom(base, p)
	if err != nil {
		return abi.PathFact{}, &ArgError{Path: p, Err: err}
	}
	return f, nil
}

// realBase resolves an absolute directory that is used as a starting point.
func realBase(dir string) (string, error) {
	w := walker{}
	return w.join("/", dir)
}

// resolvedFrom is the Resolved of resolveFrom(base, raw) without the rest
// of the fact (whether the path as asked for is a link, exists, its
// nearest existing ancestor), which a working directory does not need:
// the walk's lstats are all its system calls.
func resolvedFrom(base, raw string) (string, error) {
	if strings.IndexByte(raw, 0) >= 0 {
		return "", ErrNUL
	}
	w := walker{}
	return w.join(base, expandUser(raw))
}

// resolveFrom resolves raw relative to base, which must be absolute and real.
func resolveFrom(base, raw string) (abi.PathFact, error) {
	resolved, err := resolvedFrom(base, raw)
	if err != nil {
		return abi.PathFact{}, err
	}
	expanded := expandUser(raw)
	f := abi.PathFact{Raw: raw, Resolved: resolved, Link: isLink(base, expanded)}
	mode, err := statMode(resolved)
	switch {
	case err == nil:
		f.Exists = true
		f.NearestExisting = resolved
		switch {
		case mode.IsRegular():
			f.Kind = abi.PathKindFile
		case mode.IsDir():
			f.Kind = abi.PathKindDir
		default:
			f.Kind = abi.PathKindOther
		}
		return f, nil
	case isMissing(err):
		f.Kind = abi.PathKindMissing
	default:
		return abi.PathFact{}, err
	}
	// NB: Resolved's existing components are real (no symlinks left), so a
	// plain lstat of each ancestor suffices. A non-directory is skipped: it
	// cannot contain the path (AgentLane's stat raises NotADirectoryError).
	for d := path.Dir(resolved); ; d = path.Dir(d) {
		mode, err := lstatMode(d)
		if err == nil && mode.IsDir() {
			f.NearestExisting = d
			break
		}
		if err != nil && !isMissing(err) {
			return abi.PathFact{}, err
		}
		if d == "/" {
			f.NearestExisting = "/"
			break
		}
	}
	return f, nil
}

// isLink reports that the path as asked for (p joined to base) is a
// symbolic link itself, as Python's Path.is_symlink() does: the path is
// written as pathlib writes it (empty and "." components dropped, ".."
// kept, so the kernel resolves it physically) and lstat follows the
// intermediate links, not the last one. An error (a missing component) is
// no link.
func isLink(base, p string) bool {
	if !path.IsAbs(p) {
		p = base + "/" + p
	}
	var b strings.Builder
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			b.WriteString("/")
			b.WriteString(c)
		}
	}
	if b.Len() == 0 {
		return false
	}
	mode, err := lstatMode(b.String())
	return err == nil && mode&fs.ModeSymlink != 0
}

// walker resolves paths component by component, as Python's
// posixpath.realpath(strict=False) does, but fails on loops instead of
// leaving the looping link unresolved.
type walker struct {
	hops int
	// seen maps a symlink's path to its resolution; "" marks a link being
	// resolved (a second visit is a loop).
	seen map[string]string
}

// join resolves rest relative to base (absolute, real). An absolute rest
// starts again from "/".
func (w *walker) join(base, rest string) (string, error) {
	p := base
	if strings.HasPrefix(rest, "/") {
		p = "/"
	}
	for rest != "" {
		var name string
		name, rest, _ = strings.Cut(rest, "/")
		switch name {
		case "", ".":
			continue
		case "..":
			p = path.Dir(p)
			continue
		}
		next := p + "/" + name
		if p == "/" {
			next = "/" + name
		}
		mode, err := lstatMode(next)
		if err != nil {
			if isMissing(err) {
				p = next
				continue
			}
			return "", err
		}
		if mode&fs.ModeSymlink == 0 {
			p = next
			continue
		}
		if r, ok := w.seen[next]; ok {
			if r == "" {
				return "", ErrSymlinkLoop
			}
			p = r
			continue
		}
		w.hops++
		if w.hops > MaxSymlinks {
			return "", ErrSymlinkLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if w.seen == nil {
			w.seen = make(map[string]string)
		}
		w.seen[next] = ""
		r, err := w.join(p, target)
		if err != nil {
			return "", err
		}
		w.seen[next] = r
		p = r
	}
	return p, nil
}

// isMissing reports an error meaning "nothing exists at this path": ENOENT,
// or ENOTDIR (a component is not a directory).
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
