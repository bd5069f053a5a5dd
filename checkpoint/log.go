package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The operator's checkpoint log, outside the data directory: either a
// directory, holding one file per checkpoint named
// <chain_id>-<size>.checkpoint, or a file of signed notes, each followed
// by one empty line.

// Append adds a signed checkpoint to the log at path: a new file in it when
// path is an existing directory or ends in a path separator (the
// directory is then created), else appended to the file (created if
// needed) and synced.
func Append(path string, signed []byte) error {
	s, err := Open(signed, nil)
	if err != nil {
		return err
	}
	if strings.HasSuffix(path, string(os.PathSeparator)) || strings.HasSuffix(path, "/") {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return err
		}
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		chain, _ := s.Chain()
		name := filepath.Join(path, fmt.Sprintf("%s-%d.checkpoint", chain, s.Size))
		if old, err := os.ReadFile(name); err == nil {
			if prev, err := Open(old, nil); err == nil && prev.Head != s.Head {
				return fmt.Errorf("checkpoint: %s already holds another head for this size: the chain forked", name)
			}
		}
		return writeSynced(name, signed, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	}
	return writeSynced(path, append(append([]byte(nil), signed...), '\n'), os.O_WRONLY|os.O_CREATE|os.O_APPEND)
}

func writeSynced(path string, b []byte, flag int) error {
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Limits of the operator's log as ReadLog reads it: one note (a file of a
// log directory) and a whole log file. A larger file is refused unread.
const (
	MaxNoteBytes = 64 << 10
	MaxLogBytes  = 256 << 20
)

// readFile reads a file of at most limit bytes.
func readFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("checkpoint: %s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// ReadLog returns every signed note of the log at path (a directory of
// *.checkpoint files, or a file of notes each followed by an empty line).
func ReadLog(path string) ([][]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		paths, err := filepath.Glob(filepath.Join(path, "*.checkpoint"))
		if err != nil {
			return nil, err
		}
		sort.Strings(paths)
		var out [][]byte
		for _, p := range paths {
			b, err := readFile(p, MaxNoteBytes)
			if err != nil {
				return nil, err
			}
			if _, err := Open(b, nil); err != nil {
				return nil, fmt.Errorf("checkpoint: %s: %w", p, err)
			}
			out = append(out, b)
		}
		return out, nil
	}
	b, err := readFile(path, MaxLogBytes)
	if err != nil {
		return nil, err
	}
	return splitLog(b)
}

// splitLog cuts a log file into notes: a note is text lines, an empty
// line, signature lines ("— ..."); the empty line after the signatures
// ends it.
func splitLog(b []byte) ([][]byte, error) {
	var out [][]byte
	lines := strings.SplitAfter(string(b), "\n")
	var cur bytes.Buffer
	inSigs := false
	for i, line := range lines {
		if line == "" {
			continue
		}
		switch {
		case line == "\n" && !inSigs:
			if cur.Len() == 0 {
				return nil, fmt.Errorf("%w: log line %d: empty note", ErrMalformed, i+1)
			}
			inSigs = true
			cur.WriteString(line)
		case line == "\n" && inSigs:
			out = append(out, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			inSigs = false
		default:
			if inSigs && !strings.HasPrefix(line, "— ") {
				return nil, fmt.Errorf("%w: log line %d: expected a signature line or an empty line", ErrMalformed, i+1)
			}
			cur.WriteString(line)
		}
	}
	if cur.Len() > 0 {
		// Every note is followed by an empty line: a log ending otherwise
		// was cut.
		return nil, errors.New("checkpoint: log ends inside a note (truncated?)")
	}
	for i, n := range out {
		if _, err := Open(n, nil); err != nil {
			return nil, fmt.Errorf("checkpoint: log note %d: %w", i+1, err)
		}
	}
	return out, nil
}
