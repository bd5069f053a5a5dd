// Package wasmfixtures embeds the committed Wasm modules the tests of host
// and cmd/govhost load: the example gate, the hostile fixtures and the
// benchmark gates. Their sources live in testdata/ at the repository root and
// `make fixtures` rebuilds them into wasm/ here (see testdata/README.md).
// Only tests import this package.
package wasmfixtures

import "embed"

// FS holds wasm/*.wasm.
//
//go:embed wasm/*.wasm
var FS embed.FS

// Bytes returns the bytes of wasm/name (for example "loop.wasm"); it panics
// if there is no such fixture.
func Bytes(name string) []byte {
	b, err := FS.ReadFile("wasm/" + name)
	if err != nil {
		panic(err)
	}
	return b
}
