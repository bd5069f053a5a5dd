// Command trivial is the benchmarks' trivial gate for the native ABI,
// written with //go:wasmexport directly (no SDK), the way an author in any
// language would follow abi/README.md. Its logic matches the "trivial" mode
// of testdata/extism: deny when the input names the tool "web_fetch", on
// raw bytes, with constant answers.
//
// Built by `make fixtures`:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=-buildid= \
//		-o internal/wasmfixtures/wasm/trivial_go.wasm ./testdata/go/trivial
package main

import (
	"bytes"
	"unsafe"
)

var (
	in    []byte
	deny  = []byte(`{"decision":"deny","reason_code":"trivial.denied"}`)
	allow = []byte(`{"decision":"allow","reason_code":"trivial.allowed"}`)
	// NB: the JSON of the host's encoder has no spaces after colons.
	needle = []byte(`"tool":"web_fetch"`)
)

//go:wasmexport gate_abi_version
func abiVersion() int32 { return 1 }

//go:wasmexport gate_alloc
func alloc(n int32) int32 {
	if int(n) > cap(in) {
		in = make([]byte, n)
	}
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(in))))
}

//go:wasmexport gate_evaluate
func evaluate(ptr, n int32) int64 {
	out := allow
	if bytes.Contains(in[:n], needle) {
		out = deny
	}
	return int64(uintptr(unsafe.Pointer(unsafe.SliceData(out))))<<32 | int64(len(out))
}

func main() {}
