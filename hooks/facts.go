package hooks

import "os"

// osFacts answers the translation's host facts from the filesystem.
type osFacts struct{}

func (osFacts) Stat(path string) (exists, dir bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return false, false
	}
	return true, fi.IsDir()
}
