// Package native runs modules of the native gate ABI v1 on wazero: it
// instantiates and configures an instance, writes inputs into guest memory,
// calls gate_evaluate under a deadline and reads the answer back.
package native

import (
	"context"
	"errors"
	"math/bits"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/fault"
	"github.com/govhost/govhost/host/internal/interrupt"
	"github.com/govhost/govhost/host/internal/memcap"
	"github.com/govhost/govhost/host/internal/wire"
)

// minInputBuffer is the smallest input buffer the host asks gate_alloc for,
// so that ordinary inputs never need a second allocation.
const minInputBuffer = 4096

// Params are the limits of every instance.
type Params struct {
	MemoryLimitPages uint32
	CallTimeout      time.Duration // 0: only the caller's context bounds a call
	// SetupTimeout bounds each call of an instance's setup (start function,
	// _initialize, the ABI version, gate_configure) instead of CallTimeout
	// when it is larger (a trusted module's).
	SetupTimeout   time.Duration
	MaxOutputBytes int
}

// Instance is one instantiated, configured module. Not safe for concurrent
// use: the pool hands it to one caller at a time.
type Instance struct {
	mod     api.Module
	mem     api.Memory
	alloc   api.Function
	eval    api.Function
	stack   [2]uint64
	buf     uint32 // address of the input buffer (0: none yet)
	bufCap  uint32
	tracker memcap.Tracker
	timeout time.Duration
	intr    *interrupter
	maxOut  int
	dead    bool
	snap    *snapshot // nil: not resettable
}

// State says how an instance of a module can be reset (from the
// instrumentation pass, interrupt.Result).
type State struct {
	Resettable     bool
	MutableGlobals []uint32
}

// Instantiate creates an instance of cm, runs _initialize, checks the ABI
// version and passes config to gate_configure. Failures are *fault.Error
// values when the guest is to blame.
func Instantiate(ctx context.Context, rt wazero.Runtime, cm wazero.CompiledModule, ex Exports, st State, p Params, config []byte) (*Instance, error) {
	inst := &Instance{timeout: p.CallTimeout, maxOut: p.MaxOutputBytes}
	actx := experimental.WithMemoryAllocator(ctx, memcap.Allocator(uint64(p.MemoryLimitPages)*65536, &inst.tracker))
	// NB: an empty name makes the instance anonymous, so one compiled module
	// can be instantiated many times; no start function runs here, so that
	// _initialize runs under the same deadline as every other call.
	mod, err := rt.InstantiateModule(actx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		if inst.tracker.Hit() {
			return nil, fault.FromCode(fault.MemoryLimit, "instantiate")
		}
		return nil, fault.New(fault.Trap, "instantiate", "instantiation failed")
	}
	inst.mod = mod
	inst.mem = mod.Memory()
	flag, ok := mod.ExportedGlobal(interrupt.GlobalName).(api.MutableGlobal)
	tables := mod.ExportedGlobal(interrupt.TablesGlobalName)
	if !ok || tables == nil {
		_ = mod.Close(ctx)
		return nil, errors.New("native: module was not instrumented")
	}
	inst.intr = newInterrupter(flag)
	inst.tracker.CountTables(tables)
	inst.alloc = mod.ExportedFunction(abi.ExportAlloc)
	inst.eval = mod.ExportedFunction(abi.ExportEvaluate)
	if p.SetupTimeout > inst.timeout {
		inst.timeout = p.SetupTimeout
	}
	if err := inst.setup(ctx, ex, config); err != nil {
		inst.Close(ctx)
		return nil, err
	}
	inst.timeout = p.CallTimeout
	if st.Resettable {
		inst.snap = inst.takeSnapshot(st.MutableGlobals)
	}
	return inst, nil
}

func (i *Instance) setup(ctx context.Context, ex Exports, config []byte) error {
	// The module's start function, which the instrumentation took out of
	// instantiation so that it runs under the deadline.
	if start := i.mod.ExportedFunction(interrupt.StartExport); start != nil {
		if _, err := i.call(ctx, "instantiate", start); err != nil {
			return err
		}
	}
	if ex.Initialize {
		if _, err := i.call(ctx, "instantiate", i.mod.ExportedFunction(abi.ExportInitialize)); err != nil {
			return err
		}
	}
	v, err := i.call(ctx, "instantiate", i.mod.ExportedFunction(abi.ExportABIVersion))
	if err != nil {
		return err
	}
	if int32(v) != abi.Version {
		return fault.New(fault.ABIVersion, "instantiate", "module reports an ABI version this host does not speak")
	}
	if !ex.Configure {
		return nil
	}
	ptr, err := i.write(ctx, config)
	if err != nil {
		return err
	}
	r, err := i.call(ctx, "configure", i.mod.ExportedFunction(abi.ExportConfigure), uint64(ptr), uint64(len(config)))
	if err != nil {
		return err
	}
	if int32(r) != abi.ConfigureOK {
		return fault.New(fault.ConfigRejected, "configure", "gate_configure refused the configuration")
	}
	return nil
}

// Dead reports whether the instance must not be used again.
func (i *Instance) Dead() bool { return i.dead }

// Resettable reports whether the instance keeps a snapshot to be reset
// from (State.Resettable at instantiation, and the snapshot was taken).
func (i *Instance) Resettable() bool { return i.snap != nil }

// MemoryBytes is the current size of the instance's linear memory.
func (i *Instance) MemoryBytes() uint64 { return uint64(i.mem.Size()) }

// Evaluate writes input into guest memory, calls gate_evaluate and decodes
// the answer. On a guest failure it returns a *fault.Error and the instance
// is dead.
func (i *Instance) Evaluate(ctx context.Context, input []byte) (abi.GateOutput, error) {
	ptr, err := i.write(ctx, input)
	if err != nil {
		return abi.GateOutput{}, err
	}
	i.stack[0], i.stack[1] = uint64(ptr), uint64(len(input))
	if err := i.callStack(ctx, "evaluate", i.eval, i.stack[:]); err != nil {
		return abi.GateOutput{}, err
	}
	outPtr, outLen := abi.UnpackPtrLen(i.stack[0])
	if int(outLen) > i.maxOut {
		i.dead = true
		return abi.GateOutput{}, fault.New(fault.OutputTooLarge, "evaluate", "output exceeds the host's cap")
	}
	view, ok := i.mem.Read(outPtr, outLen)
	if !ok {
		i.dead = true
		return abi.GateOutput{}, fault.New(fault.BadOutput, "evaluate", "output range outside guest memory")
	}
	out, err := wire.DecodeOutput(view, i.maxOut)
	if err != nil {
		i.dead = true
	}
	return out, err
}

// Describe calls gate_describe and returns a copy of its JSON.
func (i *Instance) Describe(ctx context.Context) ([]byte, error) {
	fn := i.mod.ExportedFunction(abi.ExportDescribe)
	if fn == nil {
		return nil, nil
	}
	v, err := i.call(ctx, "describe", fn)
	if err != nil {
		return nil, err
	}
	ptr, n := abi.UnpackPtrLen(v)
	if int(n) > i.maxOut {
		return nil, fault.New(fault.OutputTooLarge, "describe", "description exceeds the host's cap")
	}
	view, ok := i.mem.Read(ptr, n)
	if !ok {
		return nil, fault.New(fault.BadOutput, "describe", "description range outside guest memory")
	}
	return append([]byte(nil), view...), nil
}

// Close releases the instance. Safe to call more than once.
func (i *Instance) Close(ctx context.Context) {
	i.dead = true
	if i.intr != nil {
		i.intr.timer.Stop()
	}
	_ = i.mod.Close(ctx)
}

// write copies data into the guest's input buffer, asking gate_alloc for a
// bigger one when it does not fit, and returns its address.
func (i *Instance) write(ctx context.Context, data []byte) (uint32, error) {
	n := uint64(len(data))
	if n > uint64(i.bufCap) || i.buf == 0 {
		want := max(uint64(minInputBuffer), n)
		if bits.OnesCount64(want) != 1 {
			want = 1 << bits.Len64(want)
		}
		if want > 1<<31 {
			i.dead = true
			return 0, fault.New(fault.Alloc, "evaluate", "input too large for a 32-bit guest")
		}
		ptr, err := i.call(ctx, "alloc", i.alloc, want)
		if err != nil {
			return 0, err
		}
		p := uint32(ptr)
		if p == 0 || uint64(p)+want > uint64(i.mem.Size()) {
			i.dead = true
			return 0, fault.New(fault.Alloc, "alloc", "gate_alloc returned no usable buffer")
		}
		i.buf, i.bufCap = p, uint32(want)
	}
	if !i.mem.Write(i.buf, data) {
		i.dead = true
		return 0, fault.New(fault.Alloc, "alloc", "input buffer outside guest memory")
	}
	return i.buf, nil
}

func (i *Instance) call(ctx context.Context, op string, fn api.Function, params ...uint64) (uint64, error) {
	var stack [2]uint64
	copy(stack[:], params)
	if err := i.callStack(ctx, op, fn, stack[:]); err != nil {
		return 0, err
	}
	return stack[0], nil
}

// callStack calls fn under the per-call timeout and the caller's context:
// the host's timer and the caller's context set the interrupt flag, which
// the instrumented guest polls at function entries and loop headers.
//
// A call that outlives its deadline (or its context) is a timeout (or a
// cancellation) whatever it answered; a call during which memory or table
// growth was refused is gate.memory_limit whatever it answered.
func (i *Instance) callStack(ctx context.Context, op string, fn api.Function, stack []uint64) error {
	if i.dead {
		return fault.New(fault.Trap, op, "instance already failed")
	}
	if err := ctx.Err(); err != nil {
		return classify(ctx, op, err, &i.tracker) // not started: the instance stays usable
	}
	i.tracker.Reset()
	in := i.intr
	var started time.Time
	if i.timeout > 0 {
		started = time.Now()
		in.timer.Reset(i.timeout)
	}
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				in.interrupt(reasonDeadline)
			} else {
				in.interrupt(reasonCanceled)
			}
		})
	}
	err := fn.CallWithStack(ctx, stack)
	quiet := true // no other goroutine can be setting the flag now
	if stop != nil && !stop() {
		quiet = false
	}
	if i.timeout > 0 {
		if !in.timer.Stop() {
			quiet = false
			in.interrupt(reasonDeadline) // fired: make sure the reason says so
		} else if time.Since(started) >= i.timeout {
			// NB: a loaded scheduler can run the timer late, after a call
			// that outlived it returned; the deadline is the clock's, not
			// the timer goroutine's.
			in.interrupt(reasonDeadline)
		}
	}
	if !quiet {
		i.dead = true // the flag is (being) set: never call this instance again
	}
	switch in.reason.Load() {
	case reasonDeadline:
		i.dead = true
		return fault.FromCode(fault.Timeout, op)
	case reasonCanceled:
		i.dead = true
		return fault.FromCode(fault.Canceled, op)
	}
	if ctx.Err() != nil { // ended during the call, its AfterFunc still pending
		i.dead = true
		return classify(ctx, op, ctx.Err(), &i.tracker)
	}
	flag := in.flag.Get() // quiet here: only the guest wrote it
	if i.tracker.Hit() || flag == interrupt.FlagTableLimit {
		i.dead = true
		return fault.FromCode(fault.MemoryLimit, op)
	}
	if err == nil {
		return nil
	}
	i.dead = true
	if flag == interrupt.FlagCallDepth {
		return fault.FromCode(fault.StackLimit, op)
	}
	return classify(ctx, op, err, &i.tracker)
}

// classify maps a failed call to a reason code (fault.Classify).
func classify(ctx context.Context, op string, err error, t *memcap.Tracker) *fault.Error {
	return fault.Classify(ctx, op, err, t.Hit(), "the guest trapped or exited")
}
