// Package extismrt runs gate modules built with an Extism PDK through
// Extism's Go SDK, with the host's limits: the same memory cap (through the
// same allocator), deadline, empty sandbox and containment as native gates.
package extismrt

import (
	"context"
	"errors"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/fault"
	"github.com/govhost/govhost/host/internal/interrupt"
	"github.com/govhost/govhost/host/internal/memcap"
	"github.com/govhost/govhost/host/internal/wire"
)

// Params are the limits of every instance.
type Params struct {
	MemoryLimitPages uint32
	CallTimeout      time.Duration
	MaxOutputBytes   int
}

// Exports says which gate functions a checked Extism module provides.
type Exports struct {
	Configure, Describe bool
}

// Check verifies the Extism gate convention on a module compiled by the
// host: gate_evaluate (and optional gate_configure, gate_describe) as
// Extism functions () -> i32 or () -> ().
func Check(cm wazero.CompiledModule) (Exports, error) {
	var ex Exports
	fns := cm.ExportedFunctions()
	ok := func(name string) (bool, error) {
		def, found := fns[name]
		if !found {
			return false, nil
		}
		if len(def.ParamTypes()) != 0 || len(def.ResultTypes()) > 1 ||
			(len(def.ResultTypes()) == 1 && def.ResultTypes()[0] != api.ValueTypeI32) {
			return false, fault.New(fault.MissingExport, "load", "export "+name+" is not an Extism function")
		}
		return true, nil
	}
	found, err := ok(abi.ExportEvaluate)
	if err != nil {
		return ex, err
	}
	if !found {
		return ex, fault.New(fault.MissingExport, "load", "missing export "+abi.ExportEvaluate)
	}
	if ex.Configure, err = ok(abi.ExportConfigure); err != nil {
		return ex, err
	}
	if ex.Describe, err = ok(abi.ExportDescribe); err != nil {
		return ex, err
	}
	return ex, nil
}

// Compiled is an Extism module compiled once, instantiated per pool slot.
type Compiled struct {
	plugin *extism.CompiledPlugin
	ex     Exports
	p      Params
}

// Compile compiles wasm with the host's runtime configuration (and so its
// compilation cache). The digest was checked by the caller.
func Compile(ctx context.Context, wasm []byte, rc wazero.RuntimeConfig, ex Exports, p Params) (*Compiled, error) {
	manifest := extism.Manifest{
		Wasm: []extism.Wasm{extism.WasmData{Data: wasm, Name: "main"}},
		// NB: no allowed hosts, no allowed paths, no config map: the guest
		// gets no network, no files and no host data. The timeout is ours.
	}
	cp, err := extism.NewCompiledPlugin(ctx, manifest, extism.PluginConfig{
		RuntimeConfig: rc,
		EnableWasi:    true,
	}, nil)
	if err != nil {
		return nil, fault.New(fault.BadImport, "load", "the Extism runtime refused the module")
	}
	return &Compiled{plugin: cp, ex: ex, p: p}, nil
}

// Close releases the compiled plugin and its runtime.
func (c *Compiled) Close(ctx context.Context) error { return c.plugin.Close(ctx) }

// Instance is one Extism plugin instance. Not safe for concurrent use.
type Instance struct {
	c       *Compiled
	plugin  *extism.Plugin
	main    api.Module // the plugin's instance of the gate module
	tracker memcap.Tracker
	dead    bool
}

// Instantiate creates and configures an instance.
func (c *Compiled) Instantiate(ctx context.Context, config []byte) (*Instance, error) {
	inst := &Instance{c: c}
	actx := experimental.WithMemoryAllocator(ctx, memcap.Allocator(uint64(c.p.MemoryLimitPages)*65536, &inst.tracker))
	// The default module config: no FS, env, args or stdio; fake clocks and
	// a deterministic random source; stdio sealed against the environment.
	pl, err := c.plugin.Instance(actx, extism.PluginInstanceConfig{ModuleConfig: sealedStdio{wazero.NewModuleConfig()}})
	if err != nil {
		if inst.tracker.Hit() {
			return nil, fault.FromCode(fault.MemoryLimit, "instantiate")
		}
		return nil, fault.New(fault.Trap, "instantiate", "instantiation failed")
	}
	pl.SetLogger(func(extism.LogLevel, string) {}) // guest text is never shown
	pl.Timeout = 0                                 // the host's deadline (call) is the bound
	inst.plugin = pl
	main, err := mainModule(pl)
	if err != nil {
		inst.Close(ctx)
		return nil, err
	}
	inst.main = main
	tables := main.ExportedGlobal(interrupt.TablesGlobalName)
	if main.ExportedGlobal(interrupt.GlobalName) == nil || tables == nil {
		inst.Close(ctx)
		return nil, errors.New("extismrt: module was not instrumented")
	}
	inst.tracker.CountTables(tables)
	// The start function, taken out of instantiation by the instrumentation
	// so that it runs under the deadline. NB: called directly (not through
	// Extism), before the guest runtime's own initialisation, as
	// instantiation would have.
	if start := main.ExportedFunction(interrupt.StartExport); start != nil {
		if err := inst.bounded(ctx, "instantiate", func(ctx context.Context) (bool, error) {
			_, err := start.Call(ctx)
			return err == nil, err
		}); err != nil {
			inst.Close(ctx)
			return nil, err
		}
	}
	if c.ex.Configure {
		rc, _, err := inst.call(ctx, "configure", abi.ExportConfigure, config)
		if err != nil {
			inst.Close(ctx)
			return nil, err
		}
		if rc != abi.ConfigureOK {
			inst.Close(ctx)
			return nil, fault.New(fault.ConfigRejected, "configure", "gate_configure refused the configuration")
		}
	}
	return inst, nil
}

// Reset reports false: an Extism instance is replaced rather than reset
// (the SDK's kernel keeps state, such as Extism variables, that the host
// cannot snapshot).
func (i *Instance) Reset() bool { return false }

// Dead reports whether the instance must not be used again.
func (i *Instance) Dead() bool { return i.dead }

// MemoryBytes is the current size of the gate module's linear memory (not
// the Extism kernel's).
func (i *Instance) MemoryBytes() uint64 {
	if m := i.main.Memory(); m != nil {
		return uint64(m.Size())
	}
	return 0
}

// Evaluate calls gate_evaluate with input and decodes the answer.
func (i *Instance) Evaluate(ctx context.Context, input []byte) (abi.GateOutput, error) {
	rc, out, err := i.call(ctx, "evaluate", abi.ExportEvaluate, input)
	if err != nil {
		return abi.GateOutput{}, err
	}
	if rc != 0 {
		i.dead = true
		return abi.GateOutput{}, fault.New(fault.Trap, "evaluate", "the Extism function returned a non-zero code")
	}
	o, err := wire.DecodeOutput(out, i.c.p.MaxOutputBytes)
	if err != nil {
		i.dead = true
	}
	return o, err
}

// Describe calls gate_describe, if exported.
func (i *Instance) Describe(ctx context.Context) ([]byte, error) {
	if !i.c.ex.Describe {
		return nil, nil
	}
	rc, out, err := i.call(ctx, "describe", abi.ExportDescribe, nil)
	if err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, fault.New(fault.Trap, "describe", "the Extism function returned a non-zero code")
	}
	if len(out) > i.c.p.MaxOutputBytes {
		return nil, fault.New(fault.OutputTooLarge, "describe", "description exceeds the host's cap")
	}
	return out, nil
}

// Close releases the instance.
func (i *Instance) Close(ctx context.Context) {
	i.dead = true
	_ = i.plugin.Close(ctx)
}

func (i *Instance) call(ctx context.Context, op, name string, input []byte) (uint32, []byte, error) {
	var rc uint32
	var out []byte
	err := i.bounded(ctx, op, func(ctx context.Context) (bool, error) {
		var err error
		rc, out, err = i.plugin.CallWithContext(ctx, name, input)
		return err == nil, err
	})
	if err != nil {
		return rc, nil, err
	}
	return rc, out, nil
}

// bounded runs f under the host's call timeout and ctx, and applies the
// rules both runtimes share: a call that outlives its deadline is
// gate.timeout (or gate.canceled) whatever it answered; one during which
// memory or table growth was refused is gate.memory_limit; one stopped by
// the call-depth bound is gate.stack_limit.
func (i *Instance) bounded(ctx context.Context, op string, f func(context.Context) (ok bool, err error)) error {
	if i.dead {
		return fault.New(fault.Trap, op, "instance already failed")
	}
	i.tracker.Reset()
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if i.c.p.CallTimeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, i.c.p.CallTimeout)
	}
	ok, err := f(cctx)
	cerr := cctx.Err()
	cancel()
	if cerr != nil {
		i.dead = true
		return classify(cctx, op, cerr, &i.tracker)
	}
	flag := int32(i.main.ExportedGlobal(interrupt.GlobalName).Get())
	if i.tracker.Hit() || flag == interrupt.FlagTableLimit {
		i.dead = true
		return fault.FromCode(fault.MemoryLimit, op)
	}
	if ok {
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
	return fault.Classify(ctx, op, err, t.Hit(), "the guest trapped, exited or reported an error")
}
