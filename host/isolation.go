package host

import "fmt"

// Isolation says what state a gate's instances may carry from one call to
// the next. Two bindings never share an instance (GateOptions.Binding keys
// the pool), whatever the mode.
type Isolation int

const (
	// IsolationChain, the default: an instance serves one task chain at a
	// time. Before it serves a call of another chain (or of no chain: plain
	// Evaluate), it is reset to the state it had right after it was set up
	// (instantiated, _initialize, gate_configure): from a snapshot of its
	// memory and mutable globals for native modules whose tables and data
	// segments never change, otherwise by replacing the instance. So a gate
	// may remember a task chain's earlier calls, never another chain's.
	// A chain is given back the idle instance it dirtied last when there is
	// one, else a clean or a new one while the pool has room; only then is
	// an instance of another chain reset.
	IsolationChain Isolation = iota
	// IsolationCall: the instance is reset before every call; a gate sees
	// nothing of any earlier call, even of the same chain.
	IsolationCall
	// IsolationShared: NOT ISOLATED. Instances are reused across callers
	// without reset, so a gate can carry state from one caller's call into
	// another's. Only for modules the program ships and trusts (the built-in
	// gates embedded in the binary), where it avoids the cost of resets and
	// of the memory snapshot a reset restores from.
	IsolationShared
)

func (i Isolation) String() string {
	switch i {
	case IsolationChain:
		return "chain"
	case IsolationCall:
		return "call"
	case IsolationShared:
		return "shared"
	}
	return fmt.Sprintf("Isolation(%d)", int(i))
}

// GateOptions are the options of Host.GateWith.
type GateOptions struct {
	Isolation Isolation
	// Binding names the policy binding the gate serves (its gate id, for
	// example); gates of different bindings never share instances, even
	// with the same module and configuration.
	Binding string
}

// needsReset reports whether p must be reset before it serves a call of
// chain ("" for a call outside any chain).
func (i Isolation) needsReset(p *pooled, chain string) bool {
	if !p.dirty {
		return false
	}
	switch i {
	case IsolationShared:
		return false
	case IsolationChain:
		return chain == "" || p.chain != chain
	}
	return true
}

// pooled is an instance with what it has served since it was set up or
// last reset.
type pooled struct {
	instance
	chain string // the chain of the calls it served
	dirty bool   // it served a call since it was set up or reset
}
