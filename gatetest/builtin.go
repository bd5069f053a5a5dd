package gatetest

import (
	"context"
	"errors"
	"fmt"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// BuiltinGate is a built-in gate's embedded module on its own host,
// configured once: what a test outside the host and the gates uses where it
// needs a built-in's real decisions (the modules are the built-ins' one
// implementation). Close releases its host.
type BuiltinGate struct {
	h    *host.Host
	gate *host.Gate
}

// Builtin loads the built-in gate name (permission, pathguard, destructive,
// duties) on a new host and configures it with config (nil: none). A
// refused configuration is the host's *host.GuestError (gate.config_rejected).
func Builtin(ctx context.Context, name string, config []byte) (*BuiltinGate, error) {
	m, ok := builtin.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("gate %q: %w", name, ErrUnknownGate)
	}
	h, err := host.New(ctx, host.NewConfig())
	if err != nil {
		return nil, err
	}
	mod, err := h.LoadTrusted(ctx, m.Wasm, m.Digest)
	if err == nil {
		var g *host.Gate
		if g, err = h.Gate(ctx, mod, config); err == nil {
			return &BuiltinGate{h: h, gate: g}, nil
		}
	}
	h.Close(ctx)
	return nil, err
}

// Evaluate decides one input; a failure of the module (a trap, a timeout)
// is a deny with the failure's reason code, as the controller records it.
func (b *BuiltinGate) Evaluate(in abi.GateInput) abi.GateOutput {
	out, err := b.gate.Evaluate(context.Background(), in)
	if err != nil {
		code := host.CodeTrap
		var ge *host.GuestError
		if errors.As(err, &ge) {
			code = ge.Code
		}
		return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: code, Detail: err.Error()}
	}
	return out
}

// Close releases the gate's host.
func (b *BuiltinGate) Close() error { return b.h.Close(context.Background()) }
