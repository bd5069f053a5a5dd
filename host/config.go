package host

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/govhost/govhost/host/internal/interrupt"
)

// Defaults of a Config.
const (
	DefaultMemoryLimitPages = 512 // 32 MiB; a Go-built gate needs about 2.5 MiB at rest
	DefaultCallTimeout      = time.Second
	DefaultMaxOutputBytes   = 64 << 10
	// DefaultMaxCallDepth bounds the frames of guest functions on the call
	// stack (Go-built gates use about 60; wazero's stack costs roughly
	// 100-200 bytes a frame, so the default bounds it to a few MiB).
	DefaultMaxCallDepth = 10_000
	// DefaultLoadTimeout bounds Load of a module that is not trusted. It is
	// generous on purpose: an honest 4 MB Go-built gate compiles in seconds,
	// but under -race or on a loaded 2-core machine in tens of seconds, and
	// the structural limits (WithModuleLimits) refuse the modules whose
	// compile would explode before compiling starts. wazero cannot cancel a
	// compile, so a lower bound would return sooner without saving the CPU.
	DefaultLoadTimeout = 2 * time.Minute
	maxMemoryPages     = 65536 // 4 GiB, the most a 32-bit memory can address
	// DefaultCompileSlots is how many modules compile at once, and
	// DefaultCompileQueue how many loads may wait for a slot; a load beyond
	// both fails at once with ErrLoadBusy. A compile uses every core and,
	// for a module near the 32 MiB upload limit, about 100 MiB: two at a
	// time keep a server far inside 1 GiB.
	DefaultCompileSlots = 2
	DefaultCompileQueue = 16
	// DefaultLoadMemoryBudget bounds what one load may cost, estimated from
	// the module before compiling (the input and its instrumented copy,
	// wazero's copy of the data, 16 bytes per byte of code); a module over
	// it is refused with gate.load_memory. A Go-built gate of 4 MB needs
	// about 70 MiB; a 31 MiB data segment about 100 MiB.
	DefaultLoadMemoryBudget = 256 << 20
)

// ModuleLimits are the structural bounds Load checks in one linear pass
// before compiling, so that a module built to make wazero's compiler run
// for minutes is refused in milliseconds. Each has its own reason code
// (CodeTooManyFunctions, ...). A zero field keeps its default
// (DefaultModuleLimits).
type ModuleLimits struct {
	Functions   uint32 // imported and defined functions (gate.too_many_functions)
	Locals      uint32 // parameters and locals of one function (gate.too_many_locals)
	Nesting     uint32 // block/loop/if depth in one function (gate.nesting_too_deep)
	BranchTable uint32 // targets of one br_table (gate.branch_table_too_large)
	BodyBytes   uint32 // bytes of one function body (gate.function_too_large)
}

// DefaultModuleLimits returns the defaults of ModuleLimits: far above what
// the Go-built gates of this repository use (about 2 300 functions, 21
// locals, nesting 550, br_table 964 targets, bodies of 29 KB).
func DefaultModuleLimits() ModuleLimits {
	d := interrupt.DefaultLimits
	return ModuleLimits{Functions: d.Functions, Locals: d.Locals, Nesting: d.Nesting, BranchTable: d.BranchTable, BodyBytes: d.BodyBytes}
}

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
	callDepth      uint32
	loadTimeout    time.Duration
	limits         ModuleLimits
	compileSlots   int
	compileQueue   int
	loadMemory     int64
	set            uint8
}

const (
	setMemory = 1 << iota
	setTimeout
	setPool
	setOutput
	setLoadTimeout
	setCompileLimits
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

// CompilationCacheDir is the directory WithCompilationCacheDir set ("" for
// an in-memory cache).
func (c Config) CompilationCacheDir() string { return c.cacheDir }

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
// and denied with gate.timeout. The setup of a module loaded with
// LoadTrusted is bounded by DefaultLoadTimeout instead; its evaluations
// keep d.
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

// WithMaxCallDepth bounds how many guest function frames may be on the
// call stack at once (n ≥ 1; 0 keeps DefaultMaxCallDepth). A call past it is
// stopped and denied with gate.stack_limit.
func (c Config) WithMaxCallDepth(n uint32) Config {
	c.callDepth = n
	return c
}

// WithLoadTimeout bounds Load (checking, instrumenting and compiling a
// module) to d, on top of ctx; zero means no bound but ctx. Past it Load
// fails with gate.load_timeout. wazero cannot stop a compilation once it has
// started: the compilation goes on in the background, and Close waits for
// it. LoadTrusted is not bounded by time (the modules embedded in the
// binary compile slowly on a loaded machine, and are not hostile).
func (c Config) WithLoadTimeout(d time.Duration) Config {
	c.loadTimeout = d
	c.set |= setLoadTimeout
	return c
}

// WithCompileLimits sets how many modules compile at once (slots ≥ 1;
// 0 keeps DefaultCompileSlots) and how many loads may wait for a slot
// (queue ≥ 0; a negative value keeps DefaultCompileQueue). Loads of the same
// bytes share one compile and take one slot. A load that finds the slots
// taken and the queue full fails at once with ErrLoadBusy. LoadTrusted
// (the program's own modules) takes no slot and never waits for one.
func (c Config) WithCompileLimits(slots, queue int) Config {
	c.compileSlots, c.compileQueue = slots, queue
	c.set |= setCompileLimits
	return c
}

// WithLoadMemoryBudget bounds the memory one load may cost, estimated
// before compiling (0 keeps DefaultLoadMemoryBudget); a module over it is
// refused with gate.load_memory.
func (c Config) WithLoadMemoryBudget(bytes int64) Config {
	c.loadMemory = bytes
	return c
}

// WithModuleLimits sets the structural bounds Load checks before compiling.
func (c Config) WithModuleLimits(l ModuleLimits) Config {
	c.limits = l
	return c
}

// interruptOptions are the instrumentation's options under c.
func (c Config) interruptOptions() interrupt.Options {
	return interrupt.Options{
		Limits: interrupt.Limits{
			Functions: c.limits.Functions, Locals: c.limits.Locals, Nesting: c.limits.Nesting,
			BranchTable: c.limits.BranchTable, BodyBytes: c.limits.BodyBytes, CallDepth: c.callDepth,
		},
		MemoryCapBytes: uint64(c.memoryPages) * 65536,
	}
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
	if c.callDepth == 0 {
		c.callDepth = DefaultMaxCallDepth
	}
	if c.set&setLoadTimeout == 0 {
		c.loadTimeout = DefaultLoadTimeout
	} else if c.loadTimeout < 0 {
		errs = append(errs, fmt.Errorf("negative load timeout %v", c.loadTimeout))
	}
	if c.set&setCompileLimits == 0 || c.compileSlots == 0 {
		c.compileSlots = DefaultCompileSlots
	}
	if c.set&setCompileLimits == 0 || c.compileQueue < 0 {
		c.compileQueue = DefaultCompileQueue
	}
	if c.compileSlots < 0 {
		errs = append(errs, fmt.Errorf("compile slots %d < 0", c.compileSlots))
	}
	if c.loadMemory == 0 {
		c.loadMemory = DefaultLoadMemoryBudget
	} else if c.loadMemory < 0 {
		errs = append(errs, fmt.Errorf("negative load memory budget %d", c.loadMemory))
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
