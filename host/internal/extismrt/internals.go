package extismrt

import (
	"errors"
	"io"
	"reflect"
	"unsafe"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// sealedStdio is a module configuration whose stdout and stderr cannot be
// replaced. extism go-sdk's CompiledPlugin.Instance reconnects a WASI
// guest's stdout and stderr to the process's own when
// EXTISM_ENABLE_WASI_OUTPUT is set in the environment (ignoring the
// configuration it was given); a guest could then forge lines of govhost's
// output. The host's stdio policy (discard everything) must not depend on
// the environment.
//
// NB: Instance calls WithStartFunctions, WithStdout, WithStderr and finally
// WithName on the configuration; WithName returns wazero's own type, which
// wazero's InstantiateModule requires.
type sealedStdio struct{ wazero.ModuleConfig }

func (c sealedStdio) WithStdout(io.Writer) wazero.ModuleConfig { return c }
func (c sealedStdio) WithStderr(io.Writer) wazero.ModuleConfig { return c }
func (c sealedStdio) WithStartFunctions(names ...string) wazero.ModuleConfig {
	return sealedStdio{c.ModuleConfig.WithStartFunctions(names...)}
}

// errSDKLayout: the pinned extism go-sdk no longer has the field read below;
// Extism modules then fail to instantiate (closed), never run unbounded.
var errSDKLayout = errors.New("extismrt: extism go-sdk's Plugin has no mainModule field of type api.Module (SDK version changed)")

// mainModule returns the plugin's wazero instance of the gate module.
//
// Why reflection? extism go-sdk v1.7.1 does not expose it, and the host
// needs it for what the SDK does not do: run the module's start function
// under a deadline, and read the instrumentation's flag (call depth, table
// growth) and table size. The field is read, never written.
func mainModule(p *extism.Plugin) (api.Module, error) {
	f := reflect.ValueOf(p).Elem().FieldByName("mainModule")
	if !f.IsValid() || f.Type() != reflect.TypeFor[api.Module]() {
		return nil, errSDKLayout
	}
	m := *(*api.Module)(unsafe.Pointer(f.UnsafeAddr()))
	if m == nil {
		return nil, errSDKLayout
	}
	return m, nil
}
