package service

import (
	"context"

	"github.com/govhost/govhost/api"
)

// Governing describes what governs a call with no role or resource label:
// the globally resolved policy version, its gate bindings in evaluation
// order with each module's digest and ABI, and the instance pools of the
// gates loaded so far.
func (s *Service) Governing(ctx context.Context) (api.GoverningPolicy, error) {
	snap, err := s.eng.Policies.Resolve(ctx, "", "")
	if err != nil {
		return api.GoverningPolicy{}, policyError(err)
	}
	pools := map[string]api.PoolSize{}
	for _, p := range s.eng.Gates.Pools() {
		pools[p.GateID] = api.PoolSize{Live: p.Live, Idle: p.Idle, Size: p.Size}
	}
	out := api.GoverningPolicy{Policy: SummaryOf(snap), Bindings: []api.GoverningBinding{}}
	for _, b := range snap.GateBindings() {
		gb := api.GoverningBinding{
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
