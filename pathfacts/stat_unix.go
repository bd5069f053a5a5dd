//go:build unix

package pathfacts

import (
	"io/fs"
	"syscall"
)

// lstatMode is os.Lstat's type bits without its FileInfo: the stat buffer
// stays on the stack and a missing path (ENOENT, ENOTDIR: isMissing) is a
// bare errno, so a governed call's walk allocates only the path's C string
// per component. Any other error is os.Lstat's *fs.PathError.
func lstatMode(p string) (fs.FileMode, error) { return statType(p, false) }

// statMode is os.Stat's type bits (symlinks followed), as lstatMode.
func statMode(p string) (fs.FileMode, error) { return statType(p, true) }

func statType(p string, follow bool) (fs.FileMode, error) {
	var st syscall.Stat_t
	var err error
	op := "lstat"
	for {
		if follow {
			op, err = "stat", syscall.Stat(p, &st)
		} else {
			err = syscall.Lstat(p, &st)
		}
		if err != syscall.EINTR {
			break
		}
	}
	switch err {
	case nil:
		return typeOf(uint32(st.Mode)), nil
	case syscall.ENOENT, syscall.ENOTDIR:
		return 0, err
	}
	return 0, &fs.PathError{Op: op, Path: p, Err: err}
}

// typeOf maps a stat mode's file type to fs.FileMode's type bits (the
// ones pathfacts reads: directory, symlink, regular file, other).
func typeOf(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	case syscall.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}

// workingDir is the process's working directory as the kernel knows it:
// already real (getcwd returns the path without symlinks), one system
// call, where os.Getwd stats "." and $PWD to return the logical path the
// walk would resolve to this one anyway.
func workingDir() (string, error) {
	return syscall.Getwd()
}
