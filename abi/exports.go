package abi

// Version is the major version of the gate ABI this package describes. A
// module reports the version it implements through ExportABIVersion; the host
// refuses a module whose version it does not speak. Additions that old guests
// can ignore (new optional JSON fields) do not change the version.
const Version = 1

// Export names of the native ABI v1. Signatures use core Wasm types; "ptr" and
// "len" are i32 offsets and byte counts in the module's exported memory.
const (
	// ExportMemory is the module's linear memory. Required.
	ExportMemory = "memory"
	// ExportInitialize is the WASI reactor initializer. Optional; when
	// exported the host calls it once per instance, before anything else.
	// Signature: () -> ().
	ExportInitialize = "_initialize"
	// ExportABIVersion returns the ABI version the module implements.
	// Required. Signature: () -> i32.
	ExportABIVersion = "gate_abi_version"
	// ExportAlloc returns the address of a guest-owned buffer of at least
	// size bytes that the host may write into, or 0 when it cannot. The buffer
	// stays valid, and is not touched by the guest except to read it during
	// gate_configure or gate_evaluate, until the next call of gate_alloc; the
	// host reuses it for every later call whose input fits. Required.
	// Signature: (size i32) -> (ptr i32).
	ExportAlloc = "gate_alloc"
	// ExportEvaluate evaluates one GateInput (JSON at ptr, len bytes) and
	// returns PackPtrLen(outPtr, outLen) of a GateOutput JSON document in
	// guest memory. The output stays valid until the next call into the
	// module. Required. Signature: (ptr i32, len i32) -> i64.
	ExportEvaluate = "gate_evaluate"
	// ExportConfigure receives the binding's configuration (JSON at ptr,
	// len bytes) once per instance, before the first gate_evaluate. It returns
	// ConfigureOK to accept it and any other value to refuse it. Optional: a
	// module without it accepts only an empty configuration.
	// Signature: (ptr i32, len i32) -> i32.
	ExportConfigure = "gate_configure"
	// ExportDescribe returns PackPtrLen of a Description JSON document.
	// Optional. Signature: () -> i64.
	ExportDescribe = "gate_describe"
)

// ConfigureOK is gate_configure's result for an accepted configuration.
const ConfigureOK = 0

// ImportModuleWASI is the only import module a native ABI v1 gate may use.
// The host provides it with no preopened directories, no environment, no
// arguments, no sockets, a fake clock and a deterministic random source.
const ImportModuleWASI = "wasi_snapshot_preview1"

// ImportModuleExtism is the import module that marks a module built with an
// Extism PDK. Such modules follow the Extism ABI: they export
// ExportEvaluate (and optionally ExportConfigure) as Extism functions of
// signature () -> i32, read the JSON document with the PDK's input function,
// write the JSON answer with its output function and return 0.
const ImportModuleExtism = "extism:host/env"

// PackPtrLen packs an address and a length into the i64 that gate_evaluate
// and gate_describe return: the address in the high 32 bits, the length in
// the low 32 bits.
func PackPtrLen(ptr, length uint32) uint64 {
	return uint64(ptr)<<32 | uint64(length)
}

// UnpackPtrLen is the inverse of PackPtrLen.
func UnpackPtrLen(v uint64) (ptr, length uint32) {
	return uint32(v >> 32), uint32(v)
}

// Description is what gate_describe returns: informational metadata shown by
// tooling (govhost plugin check). It never influences a verdict.
type Description struct {
	// Name is a short identifier ("toolgate").
	Name string `json:"name"`
	// Version is the gate's own version ("1.0.0").
	Version string `json:"version,omitempty"`
	// Summary is one sentence for humans.
	Summary string `json:"summary,omitempty"`
	// ReasonCodes lists the reason codes the gate may answer with.
	ReasonCodes []string `json:"reason_codes,omitempty"`
}
