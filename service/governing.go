package service

import (
	"context"
)

// GoverningPolicy is what governs an unlabelled call: the globally
// resolved policy version and its gate bindings in evaluation order.
type GoverningPolicy struct {
	Policy   PolicySummary
	Bindings []GoverningBinding
}

// GoverningBinding is one gate binding with its module and pool (nil: the
// gate has not been loaded yet).
type GoverningBinding struct {
	GateID       string
	Order        int
	Level        string
	ToolIDs      []string
	ModuleDigest string
	ABIKind      string
	Builtin      string
	Transform    bool
	Config       string
	Pool         *PoolSize
}

// PoolSize is a gate's instance pool: live (idle or serving) and the bound.
type PoolSize struct {
	Live int
	Idle int
	Size int
}

// Governing describes what governs a call with no role or resource label:
// the globally resolved policy version, its gate bindings in evaluation
// order with each module's digest and ABI, and the instance pools of the
// gates loaded so far.
func (s *Service) Governing(ctx context.Context) (GoverningPolicy, error) {
	snap, err := s.eng.Policies.Resolve(ctx, "", "")
	if err != nil {
		return GoverningPolicy{}, policyError(err)
	}
	pools := map[string]PoolSize{}
	for _, p := range s.eng.Gates.Pools() {
		pools[p.GateID] = PoolSize{Live: p.Live, Idle: p.Idle, Size: p.Size}
	}
	out := GoverningPolicy{Policy: SummaryOf(snap), Bindings: []GoverningBinding{}}
	for _, b := range snap.GateBindings() {
		gb := GoverningBinding{
			GateID: b.GateID(), Order: b.Order(), Level: string(b.Level()), ToolIDs: b.ToolIDs(),
			ModuleDigest: b.ModuleDigest(), Transform: b.Transform(), Config: b.Config(),
		}
		if m, err := s.Module(ctx, b.ModuleDigest()); err == nil {
			gb.ABIKind, gb.Builtin = m.ABIKind, m.Builtin
		}
		if p, ok := pools[b.GateID()]; ok {
			gb.Pool = &p
		}
		out.Bindings = append(out.Bindings, gb)
	}
	return out, nil
}
