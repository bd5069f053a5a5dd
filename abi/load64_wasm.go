package abi

import "unsafe"

// load64 is the eight bytes of s at i, little-endian; i+8 <= len(s).
//
// NB: Go does not merge byte loads into one on Wasm, whose loads may be
// unaligned, so it reads through a pointer; no checkptr runs on Wasm.
func load64(s string, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i))
}
