package permission

import "github.com/govhost/govhost/abi"

// Gate is a configured permission gate. It is immutable after New and safe
// for concurrent use.
type Gate struct {
	lion      *lionPolicy
	agentLane *agentLanePolicy
	coding    *codingPolicy
}

// New decodes a configuration (see Config and README.md) and builds the
// gate. Errors are *ConfigError values naming the field; they match
// ErrConfig and their kind with errors.Is.
func New(configJSON []byte) (*Gate, error) {
	c, err := ParseConfig(configJSON)
	if err != nil {
		return nil, err
	}
	return NewFromConfig(c)
}

// NewFromConfig builds the gate for a configuration made in Go.
func NewFromConfig(c *Config) (*Gate, error) {
	families := 0
	if c.Preset != "" {
		families++
	}
	if c.LionAGI != nil {
		families++
	}
	if c.AgentLane != nil {
		families++
	}
	if c.Coding != nil {
		families++
	}
	if families != 1 {
		return nil, configErr("", ErrFamily, "want exactly one of Preset, LionAGI, AgentLane, Coding; got %d", families)
	}
	switch {
	case c.Preset != "":
		p, err := presetPolicy("preset", c.Preset)
		if err != nil {
			return nil, err
		}
		return &Gate{lion: p}, nil
	case c.LionAGI != nil:
		return &Gate{lion: newLionPolicy(c.LionAGI)}, nil
	case c.Coding != nil:
		p, err := newCodingPolicy(c.Coding)
		if err != nil {
			return nil, err
		}
		return &Gate{coding: p}, nil
	}
	p, err := newAgentLanePolicy(c.AgentLane)
	if err != nil {
		return nil, err
	}
	return &Gate{agentLane: p}, nil
}

// Evaluate decides one request.
//
// The LionAGI family reads Tool, Action, Arguments and ArgumentOrder; the
// AgentLane family reads Tool, Operation (inferred for AgentLane's own tools
// when empty), Paths and Arguments. Neither reads the path facts' filesystem
// meaning: that is pathguard's job.
func (g *Gate) Evaluate(in abi.GateInput) abi.GateOutput {
	if g.lion != nil {
		return g.lion.evaluate(&in)
	}
	if g.coding != nil {
		return g.coding.evaluate(&in)
	}
	return g.agentLane.evaluate(&in)
}
