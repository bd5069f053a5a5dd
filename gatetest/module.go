package gatetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// ErrUnknownGate is wrapped when a gate reference is neither a readable file
// nor a built-in gate's name.
var ErrUnknownGate = errors.New("neither a .wasm file nor a built-in gate")

// ReadModule returns the bytes of the gate ref names: a file (any path that
// exists, or that ends in .wasm) or a built-in gate's name (permission,
// pathguard, destructive). builtin reports the latter: such a module ships
// with the program and is loaded with host.LoadTrusted (LoadModule).
func ReadModule(ref string) (wasm []byte, builtinGate bool, err error) {
	if _, err := os.Stat(ref); err == nil || strings.HasSuffix(ref, ".wasm") || strings.ContainsRune(ref, os.PathSeparator) {
		wasm, err := os.ReadFile(ref)
		return wasm, false, err
	}
	if m, ok := builtin.Lookup(ref); ok {
		return m.Wasm, true, nil
	}
	return nil, false, fmt.Errorf("gate %q: %w (built-ins: %s)", ref, ErrUnknownGate, strings.Join(builtin.Names(), ", "))
}

// LoadModule loads wasm on h: a built-in gate with host.LoadTrusted (no load
// timeout: it is not an attacker's), anything else with host.Load.
func LoadModule(ctx context.Context, h *host.Host, wasm []byte, builtinGate bool, expectedSHA256 string) (*host.Module, error) {
	if builtinGate {
		return h.LoadTrusted(ctx, wasm, expectedSHA256)
	}
	return h.Load(ctx, wasm, expectedSHA256)
}
