package host

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/govhost/govhost/host/internal/interrupt"
)

// ErrModuleReleased is GateWith's answer for a module Release has let go:
// load the bytes again (from the compilation cache when there is one).
var ErrModuleReleased = errors.New("host: module was released; load it again")

// Release lets go of m's compiled code, unless a gate of the host was made
// from it (gates live as long as the host, and so do their modules): then
// it does nothing and returns false. After a release, Load of the same bytes
// compiles them again, and GateWith(m) fails with ErrModuleReleased; m's
// Digest, Kind, Exports and Size stay readable. Releasing twice, or a
// module of another host, returns false.
func (h *Host) Release(ctx context.Context, m *Module) bool {
	if m == nil || m.host != h {
		return false
	}
	h.mu.Lock()
	if m.released || h.modules[m.digest] != m {
		h.mu.Unlock()
		return false
	}
	for key := range h.gates {
		if key.module == m.digest {
			h.mu.Unlock()
			return false
		}
	}
	m.released = true
	delete(h.modules, m.digest)
	h.mu.Unlock()
	m.close(ctx)
	return true
}

// Released reports whether Release has let go of m.
func (m *Module) Released() bool {
	m.host.mu.Lock()
	defer m.host.mu.Unlock()
	return m.released
}

// CompiledBytes estimates what m holds while it is compiled: wazero's
// decoded copy of the instrumented module (its data segments and function
// bodies, about the instrumented size) and the machine code, counted at 4
// bytes per byte of code. It is what releasing m gives back, give or take.
func (m *Module) CompiledBytes() int64 { return m.compiledBytes }

// compiledBytesOf is CompiledBytes' estimate from the instrumentation pass's
// result.
func compiledBytesOf(res *interrupt.Result) int64 {
	return int64(len(res.Wasm)) + 4*int64(res.CodeBytes)
}

// Compiles counts the modules this host has compiled (checked,
// instrumented and compiled, from the compilation cache or not): a Load of
// bytes the host holds does not count, a Load after Release does.
func (h *Host) Compiles() int64 { return h.compiles.Load() }

// CheckKey names the checks Load applies to a module: the structural
// limits, the memory cap and load memory budget, and the instrumentation
// pass's own source (interrupt.Fingerprint, which includes the Go version).
// A module Load accepted or refused (other than for time, cancellation or a
// busy host) under one key gets the same answer under it again, so a caller
// may keep that answer beside the module, keyed by CheckKey.
func (h *Host) CheckKey() string {
	opts, err := json.Marshal(h.cfg.interruptOptions())
	if err != nil {
		panic("host: interrupt options do not marshal: " + err.Error())
	}
	sum := sha256.New()
	for _, part := range [][]byte{[]byte("govhost module check v1"), opts, binary.LittleEndian.AppendUint64(nil, uint64(h.cfg.loadMemory)), []byte(interrupt.Fingerprint())} {
		sum.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(part))))
		sum.Write(part)
	}
	return hex.EncodeToString(sum.Sum(nil))
}
