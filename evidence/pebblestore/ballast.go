package pebblestore

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ballastName is the file Open reserves disk room in. It is not a Pebble
// file name, so Pebble ignores it.
const ballastName = "EVIDENCE-BALLAST"

// ballast reserves disk room so a full disk is reported, not fatal.
//
// Why? Pebble treats a failed WAL write as fatal (cockroachdb/pebble#3427),
// so on a full disk the process would stop on the next append. With
// vfs.OnDiskFull, the first ENOSPC runs onFull before the write is retried
// once: the ballast is deleted, the retry succeeds (that append is durable
// and acknowledged normally), and the store refuses later appends with
// ErrDiskFull, leaving the freed room to Pebble's flushes and compactions.
// Each refused Append first tries to re-create the ballast; once that
// succeeds (space was freed), appends resume.
type ballast struct {
	fs   vfs.FS // the unwrapped FS: ballast I/O must not trigger onFull
	path string
	size int64
	log  *slog.Logger
	full atomic.Bool
	mu   sync.Mutex // serializes create/remove
}

// create writes the ballast if it is missing. Preallocate reserves blocks
// without writing them where the filesystem supports it; otherwise zeros
// are written.
func (b *ballast) create() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if fi, err := b.fs.Stat(b.path); err == nil && fi.Size() >= b.size {
		return nil
	}
	f, err := b.fs.Create(b.path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	err = fill(f, b.size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = b.fs.Remove(b.path)
		return fmt.Errorf("pebblestore: reserve %d bytes in %s: %w", b.size, b.path, err)
	}
	return nil
}

func fill(f vfs.File, size int64) error {
	// Preallocate alone may keep the file size at 0 (FALLOC_FL_KEEP_SIZE),
	// which create's Stat would read as missing: write the zeros, which
	// also works where Preallocate is a no-op (MemFS).
	_ = f.Preallocate(0, size)
	zeros := make([]byte, min(size, 1<<20))
	for written := int64(0); written < size; {
		n, err := f.Write(zeros[:min(int64(len(zeros)), size-written)])
		if err != nil {
			return err
		}
		written += int64(n)
	}
	return nil
}

// onFull runs inside vfs.OnDiskFull's callback, with the FS's writes
// blocked: it must be quick and must not write through the wrapped FS.
func (b *ballast) onFull() {
	b.full.Store(true)
	b.mu.Lock()
	err := b.fs.Remove(b.path)
	b.mu.Unlock()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		b.log.Error("pebblestore: disk full and the ballast could not be removed", slog.String("path", b.path), slog.Any("error", err))
		return
	}
	b.log.Error("pebblestore: disk full; ballast released, appends refused until space is freed", slog.String("path", b.path))
}

// check returns ErrDiskFull while the disk is full. It re-creates the
// ballast to find out whether space came back.
func (b *ballast) check() error {
	if b == nil || !b.full.Load() {
		return nil
	}
	if err := b.create(); err != nil {
		return fmt.Errorf("%w: %w", ErrDiskFull, err)
	}
	b.full.Store(false)
	b.log.Info("pebblestore: disk space is back; ballast re-created, appends resume", slog.String("path", b.path))
	return nil
}
