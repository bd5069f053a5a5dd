//go:build !wasm

package abi

import "encoding/binary"

// load64 is the eight bytes of s at i, little-endian; i+8 <= len(s). The
// compiler makes it one load where the machine allows unaligned loads.
func load64(s string, i int) uint64 {
	return binary.LittleEndian.Uint64([]byte(s[i : i+8]))
}
