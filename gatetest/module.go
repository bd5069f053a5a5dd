package gatetest

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/govhost/govhost/plugins/builtin"
)

// ErrUnknownGate is wrapped when a gate reference is neither a readable file
// nor a built-in gate's name.
var ErrUnknownGate = errors.New("neither a .wasm file nor a built-in gate")

// ReadModule returns the bytes of the gate ref names: a file (any path that
// exists, or that ends in .wasm) or a built-in gate's name (permission,
// pathguard, destructive).
func ReadModule(ref string) ([]byte, error) {
	if _, err := os.Stat(ref); err == nil || strings.HasSuffix(ref, ".wasm") || strings.ContainsRune(ref, os.PathSeparator) {
		return os.ReadFile(ref)
	}
	if m, ok := builtin.Lookup(ref); ok {
		return m.Wasm, nil
	}
	return nil, fmt.Errorf("gate %q: %w (built-ins: %s)", ref, ErrUnknownGate, strings.Join(builtin.Names(), ", "))
}
