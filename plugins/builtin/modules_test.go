package builtin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// moduleHost is a host with the embedded modules loaded on first use,
// each configuration a gate of its own (a pool of one instance, kept until
// the host closes).
type moduleHost struct {
	h     *host.Host
	mods  map[string]*host.Module
	gates int
}

// moduleCache is the compilation cache the package's hosts share, so that
// each compiles a module once.
var moduleCache = filepath.Join(os.TempDir(), "govhost-builtin-tests")

// newModuleHost returns a host closed when t ends.
func newModuleHost(t testing.TB) *moduleHost {
	t.Helper()
	m := openModuleHost(t)
	t.Cleanup(func() { m.h.Close(context.Background()) })
	return m
}

func openModuleHost(t testing.TB) *moduleHost {
	t.Helper()
	h, err := host.New(context.Background(), host.NewConfig().WithPoolSize(1).WithCompilationCacheDir(moduleCache))
	if err != nil {
		t.Fatal(err)
	}
	return &moduleHost{h: h, mods: map[string]*host.Module{}}
}

// configure configures the embedded module name with config: the gate, or
// the host's error (refused reports a refusal of the configuration).
func (m *moduleHost) configure(t testing.TB, name string, config []byte) (*host.Gate, error) {
	t.Helper()
	ctx := context.Background()
	mod := m.mods[name]
	if mod == nil {
		b, ok := builtin.Lookup(name)
		if !ok {
			t.Fatalf("no built-in %q", name)
		}
		var err error
		if mod, err = m.h.LoadTrusted(ctx, b.Wasm, b.Digest); err != nil {
			t.Fatal(err)
		}
		m.mods[name] = mod
	}
	m.gates++
	// NB: shared isolation, as the embedded default runs the built-ins
	// (govhost.Gates): an instance serves call after call without a reset,
	// so a verdict that leaked state between calls would show. A binding
	// name per configuration keeps two gates of one configuration apart.
	return m.h.GateWith(ctx, mod, config, host.GateOptions{Isolation: host.IsolationShared, Binding: fmt.Sprint("test-", m.gates)})
}

// gate is the embedded module name configured with config; the test fails
// if the module refuses it. A failure of the module on an input panics
// (the function serves fuzz targets too, where the F's t is not the
// input's).
func (m *moduleHost) gate(t testing.TB, name, config string) func(abi.GateInput) abi.GateOutput {
	t.Helper()
	g, err := m.configure(t, name, []byte(config))
	if err != nil {
		t.Fatalf("%s refuses %s: %v", name, config, err)
	}
	return func(in abi.GateInput) abi.GateOutput {
		out, err := g.Evaluate(context.Background(), in)
		if err != nil {
			panic(fmt.Sprintf("%s configured with %s failed on %s: %v", name, config, in.Arguments, err))
		}
		return out
	}
}

// refused reports whether err is the module's refusal of its configuration.
func refused(err error) bool {
	var ge *host.GuestError
	return errors.As(err, &ge) && ge.Code == host.CodeConfigRejected
}

// fuzzModules is the host of fuzz targets that configure a gate per input
// and keep none: replaced after maxFuzzGates configurations.
var fuzzModules struct {
	mu sync.Mutex
	m  *moduleHost
}

const maxFuzzGates = 48

// configureOnce configures name with config on the fuzz host and returns
// the error and, on success, one answer to in.
func configureOnce(t testing.TB, name string, config []byte, in abi.GateInput) (abi.GateOutput, error) {
	t.Helper()
	fuzzModules.mu.Lock()
	defer fuzzModules.mu.Unlock()
	if fuzzModules.m != nil && fuzzModules.m.gates >= maxFuzzGates {
		fuzzModules.m.h.Close(context.Background())
		fuzzModules.m = nil
	}
	if fuzzModules.m == nil {
		fuzzModules.m = openModuleHost(t)
	}
	g, err := fuzzModules.m.configure(t, name, config)
	if err != nil {
		return abi.GateOutput{}, err
	}
	out, err := g.Evaluate(context.Background(), in)
	if err != nil {
		t.Fatalf("%s configured with %q failed on %s: %v", name, config, in.Arguments, err)
	}
	return out, nil
}
