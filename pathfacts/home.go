package pathfacts

import (
	"os"
	"os/user"
	"strings"
)

// expandUser expands a leading "~" or "~name" like Python's
// os.path.expanduser: "~" uses $HOME when set (even if empty), else the
// account database; "~name" uses the account database. A name that cannot
// be looked up leaves the text unchanged (it is then a relative path).
func expandUser(p string) string {
	if !strings.HasPrefix(p, "~") {
		return p
	}
	name, rest, found := strings.Cut(p[1:], "/")
	if found {
		rest = "/" + rest
	}
	var home string
	if name == "" {
		h, ok := os.LookupEnv("HOME")
		if !ok {
			u, err := user.Current()
			if err != nil {
				return p
			}
			h = u.HomeDir
		}
		home = h
	} else {
		u, err := user.Lookup(name)
		if err != nil {
			return p
		}
		home = u.HomeDir
	}
	home = strings.TrimRight(home, "/")
	if home+rest == "" {
		return "/"
	}
	return home + rest
}
