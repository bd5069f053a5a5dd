package pathfacts

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is through an *ArgError.
var (
	// ErrNotString reports a path-carrying argument whose value is neither a
	// string nor null. Both originals refuse such a call (LionAGI's guard
	// raises, AgentLane's argument model rejects it).
	ErrNotString = errors.New("pathfacts: path argument is not a string")
	// ErrNUL reports a path containing a NUL byte, which no system call
	// accepts.
	ErrNUL = errors.New("pathfacts: path contains a NUL byte")
	// ErrSymlinkLoop reports a symlink cycle, or a chain longer than
	// MaxSymlinks; the kernel would fail the call with ELOOP.
	ErrSymlinkLoop = errors.New("pathfacts: too many levels of symbolic links")
)

// ArgError says which argument could not be resolved and why. Err is one of
// the sentinels above or the underlying *fs.PathError (for example a
// permission error while inspecting a component).
type ArgError struct {
	// Arg is the argument name ("path"), or "cwd" for the working directory.
	Arg string
	// Path is the text being resolved when the error happened.
	Path string
	Err  error
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("pathfacts: argument %q (%q): %v", e.Arg, e.Path, e.Err)
}

func (e *ArgError) Unwrap() error { return e.Err }
