//go:build wasip1

package sdk

import (
	"unsafe"

	"github.com/govhost/govhost/abi"
)

// The exports of gate ABI v1. Each is a thin shell around the portable
// functions in sdk.go.

//go:wasmexport gate_abi_version
func exportABIVersion() int32 { return abi.Version }

//go:wasmexport gate_alloc
func exportAlloc(size int32) int32 {
	b := alloc(int(size))
	if cap(b) == 0 {
		return 0
	}
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}

//go:wasmexport gate_configure
func exportConfigure(ptr, size int32) int32 {
	in, ok := input(ptr, size)
	if !ok {
		return 1
	}
	return configure(in)
}

//go:wasmexport gate_evaluate
func exportEvaluate(ptr, size int32) int64 {
	in, ok := input(ptr, size)
	if !ok {
		return pack(answer(Deny(ReasonBadInput, "")))
	}
	return pack(evaluate(in))
}

//go:wasmexport gate_describe
func exportDescribe() int64 { return pack(describe()) }

// input returns the bytes the host wrote into the buffer gate_alloc handed
// out. NB: the SDK only ever reads its own buffer; an address it did not hand
// out is refused rather than dereferenced.
func input(ptr, size int32) ([]byte, bool) {
	if size == 0 {
		return nil, true
	}
	if size < 0 || int(size) > cap(g.in) || cap(g.in) == 0 ||
		uintptr(ptr) != uintptr(unsafe.Pointer(unsafe.SliceData(g.in))) {
		return nil, false
	}
	return g.in[:size], true
}

func pack(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	return int64(abi.PackPtrLen(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b))))
}
