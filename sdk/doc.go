// Package sdk is the Go guest SDK for govhost gates: it implements the
// exports of gate ABI v1 (see abi/README.md) so that a gate author writes only
// a function from abi.GateInput to abi.GateOutput.
//
// A gate is a main package that registers its function in init (a
// -buildmode=c-shared module never runs main) and is built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o gate.wasm .
//
// For example:
//
//	func init() {
//		sdk.RegisterWithConfig(func(cfg Config, in abi.GateInput) abi.GateOutput {
//			if slices.Contains(cfg.Blocked, in.Tool) {
//				return sdk.Deny("example.tool_blocked", "")
//			}
//			return sdk.Allow("example.allowed")
//		})
//	}
//
//	func main() {}
//
// The package compiles for every platform: the Wasm exports live in a
// wasip1-only file, and Configure and Evaluate run a registered gate natively
// through the same JSON round trip, so gate logic is testable with go test.
//
// A gate function that panics traps its instance; the host then denies with
// reason gate.trap and discards the instance. Nothing the guest prints is
// ever shown to anyone: the host gives it no stdout or stderr.
package sdk
