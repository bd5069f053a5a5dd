//go:build !unix

package pathfacts

import (
	"io/fs"
	"os"
)

// lstatMode is os.Lstat's type bits (stat_unix.go avoids the FileInfo).
func lstatMode(p string) (fs.FileMode, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Type(), nil
}

// statMode is os.Stat's type bits.
func statMode(p string) (fs.FileMode, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Mode().Type(), nil
}

func workingDir() (string, error) { return os.Getwd() }
