// Package memcap enforces the host's memory cap on guest linear memories and
// records when a guest hit it, so that a failure can be reported as
// gate.memory_limit rather than a generic trap.
//
// Why an allocator rather than wazero's RuntimeConfig.WithMemoryLimitPages?
// Both refuse memory.grow past the cap, but only the allocator sees the
// refused request; with the runtime limit alone the host cannot tell a
// memory bomb from any other trap.
package memcap

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// Tracker records that a memory of one instance was refused growth, and
// knows the instance's table size, which counts against the same cap.
// Safe for concurrent use.
type Tracker struct {
	hit    atomic.Bool
	tables atomic.Pointer[api.Global]
}

// CountTables makes growth count 8 bytes per entry of the instance's tables,
// whose total the instrumented module keeps in g (interrupt.TablesGlobalName).
func (t *Tracker) CountTables(g api.Global) { t.tables.Store(&g) }

// tableBytes reads the tables' size. NB: called from memory.grow, on the
// guest's own goroutine, the only one that writes the global.
func (t *Tracker) tableBytes() uint64 {
	if g := t.tables.Load(); g != nil {
		return 8 * uint64(uint32((*g).Get()))
	}
	return 0
}

// Hit reports whether growth was refused since the last Reset.
func (t *Tracker) Hit() bool { return t.hit.Load() }

// Reset clears the flag before a call.
func (t *Tracker) Reset() { t.hit.Store(false) }

// Allocator returns a wazero memory allocator that refuses to grow any memory
// past limit bytes (less the tables' 8 bytes an entry, once CountTables was
// called) and records refusals in t.
func Allocator(limit uint64, t *Tracker) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(_, _ uint64) experimental.LinearMemory {
		return &linearMemory{limit: limit, t: t}
	})
}

type linearMemory struct {
	buf   []byte
	limit uint64
	t     *Tracker
}

// Reallocate implements experimental.LinearMemory.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit || size+m.t.tableBytes() > m.limit {
		m.t.hit.Store(true)
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	// Double to amortise copies (a guest growing page by page must not cost
	// a copy per page), never past the cap.
	newCap := max(size, 2*uint64(cap(m.buf)))
	newCap = min(newCap, m.limit)
	nb := make([]byte, size, newCap)
	copy(nb, m.buf)
	m.buf = nb
	return m.buf
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() { m.buf = nil }
