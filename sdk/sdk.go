package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/govhost/govhost/abi"
)

// Func decides one request. It runs on one instance at a time (instances
// are single-threaded). in's strings may be kept, but its slices (Paths,
// ArgumentOrder, Arguments) and the ActorRef it points to are reused by the
// next call: copy them to keep them, and never modify Arguments.
type Func func(in abi.GateInput) abi.GateOutput

// Reason codes the SDK answers with on the gate's behalf.
const (
	// ReasonBadInput: the host's input was not a GateInput JSON document.
	ReasonBadInput = "sdk.bad_input"
	// ReasonUnregistered: no gate function was registered (Register not
	// called in init), or the gate was not configured.
	ReasonUnregistered = "sdk.unregistered"
	// ReasonBadOutput: the gate's answer could not be encoded (its
	// Arguments were not valid JSON).
	ReasonBadOutput = "sdk.bad_output"
)

// ErrAlreadyRegistered is the panic value of a second Register call.
var ErrAlreadyRegistered = errors.New("sdk: a gate is already registered")

// ErrConfigUnsupported is returned by Configure when a configuration is given
// to a gate registered without one.
var ErrConfigUnsupported = errors.New("sdk: gate takes no configuration")

type state struct {
	configure func(raw []byte) (Func, error)
	eval      Func
	desc      []byte
	in        []byte // the host-written input buffer (gate_alloc)
	out       []byte // the last answer; valid until the next call
	scratch   abi.GateInput
}

var g state

// Register registers f as the gate of this module. The gate accepts only an
// empty configuration ({} or null). Call it once, from init.
func Register(f Func) {
	RegisterFactory(func(struct{}) (Func, error) { return f, nil })
}

// RegisterWithConfig registers f as the gate of this module, with a
// configuration of type C decoded from the binding's JSON once per instance
// (unknown fields are refused; an empty configuration gives C's zero value).
// Call it once, from init.
func RegisterWithConfig[C any](f func(cfg C, in abi.GateInput) abi.GateOutput) {
	RegisterFactory(func(cfg C) (Func, error) {
		return func(in abi.GateInput) abi.GateOutput { return f(cfg, in) }, nil
	})
}

// RegisterFactory registers build, which turns the decoded configuration
// into the gate function once per instance; it may precompute tables and
// may refuse the configuration by returning an error (the host then refuses
// the binding with reason gate.config_rejected). Call it once, from init.
func RegisterFactory[C any](build func(cfg C) (Func, error)) {
	if g.configure != nil {
		panic(ErrAlreadyRegistered)
	}
	g.configure = func(raw []byte) (Func, error) {
		var cfg C
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
			if _, empty := any(cfg).(struct{}); empty && !bytes.Equal(raw, []byte("{}")) {
				return nil, ErrConfigUnsupported
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&cfg); err != nil {
				return nil, fmt.Errorf("sdk: config: %w", err)
			}
			if dec.More() {
				return nil, errors.New("sdk: config: trailing data")
			}
		}
		f, err := build(cfg)
		if err == nil && f == nil {
			err = errors.New("sdk: factory returned no function")
		}
		return f, err
	}
}

// Describe sets what gate_describe returns. Call it from init.
func Describe(d abi.Description) {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	g.desc = b
}

// Configure runs the registered gate's configuration step natively, as
// gate_configure does in Wasm. It is meant for tests of gate logic.
func Configure(config []byte) error {
	if g.configure == nil {
		return errors.New("sdk: no gate registered")
	}
	f, err := g.configure(config)
	if err != nil {
		return err
	}
	g.eval = f
	return nil
}

// Evaluate runs the registered gate natively through the same JSON round trip
// as gate_evaluate. It is meant for tests of gate logic.
func Evaluate(in abi.GateInput) abi.GateOutput {
	raw, err := abi.AppendGateInput(nil, &in)
	if err != nil {
		return Deny(ReasonBadInput, "")
	}
	var out abi.GateOutput
	if err := abi.DecodeGateOutput(evaluate(raw), &out); err != nil {
		return Deny(ReasonBadOutput, "")
	}
	out.Arguments = append(json.RawMessage(nil), out.Arguments...)
	return out
}

// alloc returns a buffer of length size for the host to write into; it stays
// valid until the next alloc.
func alloc(size int) []byte {
	if size < 0 {
		return nil
	}
	if cap(g.in) < size {
		g.in = make([]byte, size)
	}
	g.in = g.in[:size]
	return g.in
}

// configure implements gate_configure.
func configure(raw []byte) int32 {
	if err := Configure(raw); err != nil {
		return 1
	}
	return abi.ConfigureOK
}

// evaluate implements gate_evaluate; the result is valid until the next call.
func evaluate(raw []byte) []byte {
	if g.eval == nil {
		if g.configure == nil || Configure(nil) != nil {
			return answer(Deny(ReasonUnregistered, ""))
		}
	}
	if err := abi.DecodeGateInput(raw, &g.scratch); err != nil {
		return answer(Deny(ReasonBadInput, ""))
	}
	return answer(g.eval(g.scratch))
}

// answer encodes out into the reused output buffer.
func answer(out abi.GateOutput) []byte {
	b, err := abi.AppendGateOutput(g.out[:0], &out)
	if err != nil {
		fallback := Deny(ReasonBadOutput, "")
		b, _ = abi.AppendGateOutput(g.out[:0], &fallback)
	}
	g.out = b
	return g.out
}

// describe implements gate_describe.
func describe() []byte {
	if g.desc == nil {
		g.desc = []byte(`{"name":""}`)
	}
	return g.desc
}

// Allow is an allow verdict with the given reason code.
func Allow(reasonCode string) abi.GateOutput {
	return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: reasonCode}
}

// Deny is a deny verdict; detail is free text for humans (never evidence).
func Deny(reasonCode, detail string) abi.GateOutput {
	return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: reasonCode, Detail: detail}
}

// RequireApproval asks for a human's approval; message is shown to the agent.
func RequireApproval(reasonCode, message string) abi.GateOutput {
	return abi.GateOutput{Decision: abi.DecisionRequireApproval, ReasonCode: reasonCode, Message: message}
}
