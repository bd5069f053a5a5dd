package native

import (
	"github.com/tetratelabs/wazero/api"

	"github.com/govhost/govhost/host/internal/interrupt"
)

// snapshot is an instance's state right after it was set up (instantiated,
// initialised, configured): its linear memory, its mutable globals and the
// host's input buffer. Restoring it returns the instance to that state, at
// the cost of one copy of its memory, instead of instantiating afresh
// (1.5-5 ms for a Go-built guest).
type snapshot struct {
	memory  []byte
	globals []api.MutableGlobal
	values  []uint64
	buf     uint32
	bufCap  uint32
}

func (i *Instance) takeSnapshot(mutable []uint32) *snapshot {
	view, ok := i.mem.Read(0, i.mem.Size())
	if !ok {
		return nil
	}
	s := &snapshot{memory: append([]byte(nil), view...), buf: i.buf, bufCap: i.bufCap}
	for _, idx := range mutable {
		g, ok := i.mod.ExportedGlobal(interrupt.GlobalExport(idx)).(api.MutableGlobal)
		if !ok {
			return nil // not instrumented as expected: never resettable
		}
		s.globals = append(s.globals, g)
		s.values = append(s.values, g.Get())
	}
	return s
}

// Reset restores the instance to its snapshot and reports whether it did.
// It cannot when the module is not resettable (it changes tables or drops
// data segments), when the instance failed, or when its memory grew since
// the snapshot (memory cannot shrink, and its size would tell a later caller
// something): the caller then replaces the instance.
func (i *Instance) Reset() bool {
	s := i.snap
	if s == nil || i.dead || i.mem.Size() != uint32(len(s.memory)) {
		return false
	}
	if !i.mem.Write(0, s.memory) {
		return false
	}
	for k, g := range s.globals {
		g.Set(s.values[k])
	}
	i.buf, i.bufCap = s.buf, s.bufCap
	return true
}
