// Package builtin embeds the built-in gate modules — permission,
// pathguard, destructive and duties — as built by `make plugins`: the
// native-ABI Rust modules from plugins/rust/<name>.rs (destructive,
// pathguard, duties; docs/gates-builtin.md) and the Go one from
// plugins/<name>/wasm (permission). The bytes are committed; CI rebuilds
// them and fails on any difference, so the digests below name exactly the
// code in this repository.
package builtin

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"sort"
)

var (
	//go:embed permission.wasm
	permissionWasm []byte
	//go:embed pathguard.wasm
	pathguardWasm []byte
	//go:embed destructive.wasm
	destructiveWasm []byte
	//go:embed duties.wasm
	dutiesWasm []byte
)

// Module is one embedded gate module.
type Module struct {
	Name string
	// Digest is the lowercase hex sha256 of Wasm.
	Digest string
	// Wasm is the module's bytes. Callers must not modify it.
	Wasm []byte
}

var modules = func() map[string]Module {
	m := map[string]Module{}
	for name, b := range map[string][]byte{
		"permission":  permissionWasm,
		"pathguard":   pathguardWasm,
		"destructive": destructiveWasm,
		"duties":      dutiesWasm,
	} {
		sum := sha256.Sum256(b)
		m[name] = Module{Name: name, Digest: hex.EncodeToString(sum[:]), Wasm: b}
	}
	return m
}()

// Names lists the built-in gates, sorted.
func Names() []string {
	names := make([]string, 0, len(modules))
	for n := range modules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the built-in module with this name.
func Lookup(name string) (Module, bool) {
	m, ok := modules[name]
	return m, ok
}

// ByDigest returns the built-in module with this sha256, if any.
func ByDigest(digest string) (Module, bool) {
	for _, m := range modules {
		if m.Digest == digest {
			return m, true
		}
	}
	return Module{}, false
}
