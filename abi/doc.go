// Package abi defines govhost's gate ABI v1: the names of the exports a gate
// module provides, the memory protocol used to pass a request in and a
// verdict out, and the JSON wire types GateInput and GateOutput.
//
// DecodeGateInput, AppendGateInput, DecodeGateOutput and AppendGateOutput
// are a reflection-free JSON codec for the wire types, equivalent to
// encoding/json for them: inside a Go-built guest it is an order of
// magnitude cheaper.
//
// The package is shared by the host (which calls gates) and by guests built
// with GOOS=wasip1 (which implement them). It imports nothing of govhost's, so
// either side can depend on it. The protocol is specified in README.md for
// authors who do not write Go.
package abi
