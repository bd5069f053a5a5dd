package host

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Defaults of a Config.
const (
	DefaultMemoryLimitPages = 512 // 32 MiB; a Go-built gate needs about 2.5 MiB at rest
	DefaultCallTimeout      = time.Second
	DefaultMaxOutputBytes   = 64 << 10
	maxMemoryPages          = 65536 // 4 GiB, the most a 32-bit memory can address
)

// DefaultPoolSize is the default number of instances per gate: one per
// usable CPU.
func DefaultPoolSize() int { return runtime.GOMAXPROCS(0) }

// Config configures a Host. It is immutable: every With method returns a
// copy, so a Config can be shared and extended freely. Invalid values are
// reported by New, not by the With methods. The zero Config is NewConfig().
type Config struct {
	cacheDir       string
	memoryPages    int64
	callTimeout    time.Duration
	poolSize       int
	maxOutputBytes int
	set            uint8
}

const (
	setMemory = 1 << iota
	setTimeout
	setPool
	setOutput
)

// NewConfig returns the default configuration: an in-memory compilation
// cache, DefaultMemoryLimitPages, DefaultCallTimeout, DefaultPoolSize() and
// DefaultMaxOutputBytes.
func NewConfig() Config { return Config{} }

// WithCompilationCacheDir keeps compiled modules in dir (created if needed)
// so that a restarted process loads them without recompiling. Empty means
// an in-memory cache for the Host's lifetime.
func (c Config) WithCompilationCacheDir(dir string) Config {
	c.cacheDir = dir
	return c
}

// WithMemoryLimitPages caps every guest memory at n pages of 64 KiB
// (1..65536). Growing past it fails and the call is denied with
// gate.memory_limit.
func (c Config) WithMemoryLimitPages(n uint32) Config {
	c.memoryPages = int64(n)
	c.set |= setMemory
	return c
}

// WithCallTimeout bounds every guest call (including instantiation and
// configuration) to d, in addition to any deadline of the caller's
// context. Zero disables the host's own bound. A call past it is stopped
// and denied with gate.timeout.
func (c Config) WithCallTimeout(d time.Duration) Config {
	c.callTimeout = d
	c.set |= setTimeout
	return c
}

// WithPoolSize sets how many instances a Gate keeps at most (n ≥ 1).
// Callers beyond that wait for an instance, within their context.
func (c Config) WithPoolSize(n int) Config {
	c.poolSize = n
	c.set |= setPool
	return c
}

// WithMaxOutputBytes caps a guest's answer (n ≥ 64). A longer one is denied
// with gate.output_too_large.
func (c Config) WithMaxOutputBytes(n int) Config {
	c.maxOutputBytes = n
	c.set |= setOutput
	return c
}

// resolved fills defaults and validates.
func (c Config) resolved() (Config, error) {
	var errs []error
	if c.set&setMemory == 0 {
		c.memoryPages = DefaultMemoryLimitPages
	} else if c.memoryPages < 1 || c.memoryPages > maxMemoryPages {
		errs = append(errs, fmt.Errorf("memory limit of %d pages outside 1..%d", c.memoryPages, maxMemoryPages))
	}
	if c.set&setTimeout == 0 {
		c.callTimeout = DefaultCallTimeout
	} else if c.callTimeout < 0 {
		errs = append(errs, fmt.Errorf("negative call timeout %v", c.callTimeout))
	}
	if c.set&setPool == 0 {
		c.poolSize = DefaultPoolSize()
	} else if c.poolSize < 1 {
		errs = append(errs, fmt.Errorf("pool size %d < 1", c.poolSize))
	}
	if c.set&setOutput == 0 {
		c.maxOutputBytes = DefaultMaxOutputBytes
	} else if c.maxOutputBytes < 64 || c.maxOutputBytes > 1<<30 {
		errs = append(errs, fmt.Errorf("max output of %d bytes outside 64..1GiB", c.maxOutputBytes))
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return c, nil
}
