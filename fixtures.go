// Package govhost is the module root. It holds only Fixtures: the committed
// Wasm modules under testdata/wasm (built from the sources beside them by
// `make fixtures`; see testdata/README.md), embedded for the tests of other
// packages. Production code does not import it.
package govhost

import "embed"

// Fixtures holds testdata/wasm/*.wasm.
//
//go:embed testdata/wasm/*.wasm
var Fixtures embed.FS

// Fixture returns the bytes of testdata/wasm/name (for example
// "loop.wasm"); it panics if there is no such fixture.
func Fixture(name string) []byte {
	b, err := Fixtures.ReadFile("testdata/wasm/" + name)
	if err != nil {
		panic(err)
	}
	return b
}
