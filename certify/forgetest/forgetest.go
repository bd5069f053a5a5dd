// Package forgetest builds, from a real task's chain and policy, the
// forgeries an insider with write access to the evidence store could make
// (issue 27): each edit is re-hashed into a consistent chain, so the chain
// verifies and only certify.Check's semantic rules can refuse it. Tests of
// certify (Check, Verify, mint) and of the command line (cert verify, cert
// bundle) share them, so every layer is tried with the same forgeries.
package forgetest

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Forgery is one forbidden change and the rule that must refuse it.
type Forgery struct {
	Name string
	Rule governance.CertificateRule
	// Records edits the chain (nil when only the policy is forged).
	Records func(recs []governance.EvidenceRecord, snap governance.PolicySnapshot) ([]governance.EvidenceRecord, error)
	// Policy replaces the snapshot (nil when only the records change).
	Policy func(snap governance.PolicySnapshot) (governance.PolicySnapshot, error)
}

// All returns the seven forgeries of issue 27 and the insertion after a
// blocking deny. The chain must hold a completed operation with at least
// two gate records, a hard deny that blocked before the tool's last
// binding, and a gate record of a binding that does not apply to some
// completed operation's tool.
func All() []Forgery {
	return []Forgery{
		{Name: "gate record duplicated in a called operation", Rule: governance.RuleGateCoverage, Records: duplicateCalledGate},
		{Name: "hard deny record duplicated", Rule: governance.RuleGateCoverage, Records: duplicateHardDeny},
		{Name: "allow record added to an operation no binding names", Rule: governance.RuleGateCoverage, Records: allowOnUnbound},
		{Name: "record of a binding added to an operation it does not apply to", Rule: governance.RuleGateCoverage, Records: unboundGateRecord},
		{Name: "OPERATION_DENIED names a gate whose record was rewritten to allow", Rule: governance.RuleDenyThenCall, Records: deniedGateAllows},
		{Name: "gate records in reverse binding order", Rule: governance.RuleGateCoverage, Records: reverseGates},
		{Name: "staged policy snapshot without activation", Rule: governance.RulePolicy, Policy: Staged},
		{Name: "gate record inserted after a blocking hard deny", Rule: governance.RuleGateCoverage, Records: afterBlockingDeny},
	}
}

// Rechain re-hashes recs into a consistent chain (every payload digest,
// link and chain hash recomputed), keeping ids, types and times.
func Rechain(recs []governance.EvidenceRecord) ([]governance.EvidenceRecord, string, error) {
	out := make([]governance.EvidenceRecord, 0, len(recs))
	head := governance.EmptyHead
	for _, r := range recs {
		p, err := governance.ParseJSON([]byte(r.PayloadJSON))
		if err != nil {
			return nil, "", err
		}
		n, err := governance.NextRecord(head, governance.RecordSpec{
			RecordID: r.RecordID, Type: r.RecordType, ChainID: r.ChainID, OperationID: r.OperationID,
			PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion, Payload: p,
			SupersedesRecordID: r.SupersedesRecordID, CreatedAt: r.CreatedAt,
		})
		if err != nil {
			return nil, "", err
		}
		out = append(out, n)
		head = n.Head()
	}
	return out, head.Hash, nil
}

// Summary recounts the gate summary a forger would write into the
// certificate: every GATE_EVALUATED's level and decision, and every
// EXCEPTION_GRANTED.
func Summary(recs []governance.EvidenceRecord) governance.GateSummary {
	var s governance.GateSummary
	for _, r := range recs {
		switch r.RecordType {
		case governance.GateEvaluated:
			p, err := payloadOf(r)
			if err != nil {
				continue
			}
			level, _ := p["level"].(string)
			decision, _ := p["decision"].(string)
			s.Add(governance.GateLevel(level), governance.GateDecision(decision))
		case governance.ExceptionGranted:
			s.ExceptionCount++
		}
	}
	return s
}

// Move gives recs another chain and task: the forged copy of a task
// appended beside the real one (an append-only store cannot rewrite it),
// so the forger can ask govhost to mint it. Task boundary ids in payloads
// are rewritten; the caller re-hashes.
func Move(recs []governance.EvidenceRecord, chain, task uuid.UUID) ([]governance.EvidenceRecord, error) {
	out := make([]governance.EvidenceRecord, len(recs))
	for i, r := range recs {
		r.ChainID = chain
		r.RecordID = uuid.New()
		if err := edit(&r, func(p map[string]any) {
			if _, ok := p["task_boundary_id"]; ok {
				p["task_boundary_id"] = task.String()
			}
		}); err != nil {
			return nil, err
		}
		out[i] = r
	}
	// Supersedes and grant ids point inside the task: keep the links.
	ids := map[uuid.UUID]uuid.UUID{}
	for i := range recs {
		ids[recs[i].RecordID] = out[i].RecordID
	}
	for i := range out {
		if out[i].SupersedesRecordID.Valid {
			out[i].SupersedesRecordID.UUID = ids[out[i].SupersedesRecordID.UUID]
		}
	}
	return out, nil
}

// Repin makes recs pin snap (another policy id or version with the same
// bindings): record pins and policy_digest members are rewritten.
func Repin(recs []governance.EvidenceRecord, snap governance.PolicySnapshot) ([]governance.EvidenceRecord, error) {
	out := append([]governance.EvidenceRecord(nil), recs...)
	for i := range out {
		out[i].PolicyID, out[i].PolicyVersion = snap.PolicyID(), snap.Version()
		if err := edit(&out[i], func(p map[string]any) {
			if _, ok := p["policy_digest"]; ok {
				p["policy_digest"] = snap.Digest()
			}
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Staged is the snapshot's staged twin: same bindings and digest,
// release_state staged, no activation time or actor.
func Staged(snap governance.PolicySnapshot) (governance.PolicySnapshot, error) {
	return governance.NewPolicySnapshot(snap.PolicyID(), snap.Version(), snap.GateBindings())
}

// UnboundOperation appends, before TASK_CLOSED, an operation of tool (to
// which no binding may apply) denied policy.no_gate_binding, built from
// the chain's first denied operation as the controller writes one. It is
// honest evidence; the forgery is what is added to it.
func UnboundOperation(recs []governance.EvidenceRecord, snap governance.PolicySnapshot, tool string) ([]governance.EvidenceRecord, uuid.UUID, error) {
	for _, b := range snap.GateBindings() {
		if b.AppliesTo(tool) {
			return nil, uuid.Nil, fmt.Errorf("forgetest: binding %s applies to %q", b.GateID(), tool)
		}
	}
	denied := find(recs, func(r governance.EvidenceRecord, _ map[string]any) bool {
		return r.RecordType == governance.OperationDenied
	})
	if denied < 0 {
		return nil, uuid.Nil, fmt.Errorf("forgetest: the chain has no denied operation to copy")
	}
	opID := recs[denied].OperationID.UUID
	newOp := uuid.New()
	var add []governance.EvidenceRecord
	for _, r := range recs {
		if r.OperationID.UUID != opID || r.RecordType == governance.GateEvaluated {
			continue
		}
		r.RecordID, r.OperationID = uuid.New(), uuid.NullUUID{UUID: newOp, Valid: true}
		err := edit(&r, func(p map[string]any) {
			p["tool_id"] = tool
			if r.RecordType == governance.OperationDenied {
				delete(p, "gate_id")
				delete(p, "phase")
				p["reason_code"] = "policy.no_gate_binding"
			}
		})
		if err != nil {
			return nil, uuid.Nil, err
		}
		add = append(add, r)
	}
	return insert(recs, closeAt(recs), add...), newOp, nil
}

func duplicateCalledGate(recs []governance.EvidenceRecord, _ governance.PolicySnapshot) ([]governance.EvidenceRecord, error) {
	i := find(recs, func(r governance.EvidenceRecord, p map[string]any) bool {
		return r.RecordType == governance.GateEvaluated && p["decision"] == "allow" && endsCallable(recs, r.OperationID.UUID)
	})
	if i < 0 {
		return nil, fmt.Errorf("forgetest: no gate record of a called operation")
	}
	dup := recs[i]
	dup.RecordID = uuid.New()
	return insert(recs, i+1, dup), nil
}

func duplicateHardDeny(recs []governance.EvidenceRecord, _ governance.PolicySnapshot) ([]governance.EvidenceRecord, error) {
	i := find(recs, func(r governance.EvidenceRecord, p map[string]any) bool {
		return r.RecordType == governance.GateEvaluated && p["level"] == "hard" && p["decision"] == "deny"
	})
	if i < 0 {
		return nil, fmt.Errorf("forgetest: no hard deny")
	}
	dup := recs[i]
	dup.RecordID = uuid.New()
	return insert(recs, i+1, dup), nil
}

func allowOnUnbound(recs []governance.EvidenceRecord, snap governance.PolicySnapshot) ([]governance.EvidenceRecord, error) {
	recs, op, err := UnboundOperation(recs, snap, "forged.unbound")
	if err != nil {
		return nil, err
	}
	allow := find(recs, func(r governance.EvidenceRecord, p map[string]any) bool {
		return r.RecordType == governance.GateEvaluated && p["decision"] == "allow"
	})
	denied := find(recs, func(r governance.EvidenceRecord, _ map[string]any) bool {
		return r.OperationID.UUID == op && r.RecordType == governance.OperationDenied
	})
	if allow < 0 {
		return nil, fmt.Errorf("forgetest: no allow record")
	}
	g := recs[allow]
	g.RecordID, g.OperationID = uuid.New(), uuid.NullUUID{UUID: op, Valid: true}
	return insert(recs, denied, g), nil
}

// unboundGateRecord adds to an operation (a denied one first) the record
// of a binding that does not apply to its tool (an advisory one first).
func unboundGateRecord(recs []governance.EvidenceRecord, snap governance.PolicySnapshot) ([]governance.EvidenceRecord, error) {
	bindings := snap.GateBindings()
	for _, called := range []bool{false, true} {
		for _, level := range []governance.GateLevel{governance.LevelAdvisory, governance.LevelSoft, governance.LevelHard} {
			if out, ok, err := unboundGateRecordOf(recs, bindings, level, called); ok || err != nil {
				return out, err
			}
		}
	}
	return nil, fmt.Errorf("forgetest: every binding applies to every operation")
}

func unboundGateRecordOf(recs []governance.EvidenceRecord, bindings []governance.ExecutableGateBinding, level governance.GateLevel, called bool) ([]governance.EvidenceRecord, bool, error) {
	for _, b := range bindings {
		if b.Level() != level {
			continue
		}
		// The last gate record of an operation whose tool b does not name.
		for i := len(recs) - 1; i >= 0; i-- {
			r := recs[i]
			if r.RecordType != governance.GateEvaluated || endsCallable(recs, r.OperationID.UUID) != called {
				continue
			}
			if b.AppliesTo(toolOf(recs, r.OperationID.UUID)) {
				continue
			}
			g := r
			g.RecordID = uuid.New()
			if err := edit(&g, func(p map[string]any) {
				p["gate_id"], p["level"], p["module_digest"], p["decision"], p["reason_code"] = b.GateID(), string(b.Level()), b.ModuleDigest(), "allow", "forged.ok"
			}); err != nil {
				return nil, false, err
			}
			return insert(recs, i+1, g), true, nil
		}
	}
	return nil, false, nil
}

func deniedGateAllows(recs []governance.EvidenceRecord, _ governance.PolicySnapshot) ([]governance.EvidenceRecord, error) {
	d := find(recs, func(r governance.EvidenceRecord, p map[string]any) bool {
		return r.RecordType == governance.OperationDenied && p["gate_id"] != nil
	})
	if d < 0 {
		return nil, fmt.Errorf("forgetest: no gate denial")
	}
	out := append([]governance.EvidenceRecord(nil), recs...)
	dp, _ := payloadOf(out[d])
	for i := d - 1; i >= 0; i-- {
		if out[i].OperationID != out[d].OperationID || out[i].RecordType != governance.GateEvaluated {
			continue
		}
		if p, _ := payloadOf(out[i]); p["gate_id"] == dp["gate_id"] {
			return out, edit(&out[i], func(p map[string]any) { p["decision"], p["reason_code"] = "allow", "forged.ok" })
		}
	}
	return nil, fmt.Errorf("forgetest: the denial's gate has no record")
}

func reverseGates(recs []governance.EvidenceRecord, _ governance.PolicySnapshot) ([]governance.EvidenceRecord, error) {
	byOp := map[uuid.UUID][]int{}
	for i, r := range recs {
		if r.RecordType == governance.GateEvaluated {
			byOp[r.OperationID.UUID] = append(byOp[r.OperationID.UUID], i)
		}
	}
	for _, r := range recs {
		idx := byOp[r.OperationID.UUID]
		if r.RecordType != governance.OperationStarted || len(idx) < 2 || !endsCallable(recs, r.OperationID.UUID) {
			continue
		}
		out := append([]governance.EvidenceRecord(nil), recs...)
		for k := range idx {
			out[idx[k]] = recs[idx[len(idx)-1-k]]
		}
		return out, nil
	}
	return nil, fmt.Errorf("forgetest: no called operation with two gate records")
}

// afterBlockingDeny inserts, after a hard deny that blocked, the record of
// the tool's next binding (an allow), before OPERATION_DENIED.
func afterBlockingDeny(recs []governance.EvidenceRecord, snap governance.PolicySnapshot) ([]governance.EvidenceRecord, error) {
	for i, r := range recs {
		p, _ := payloadOf(r)
		if r.RecordType != governance.GateEvaluated || p["level"] != "hard" || p["decision"] != "deny" || p["exception_grant_id"] != nil {
			continue
		}
		tool := toolOf(recs, r.OperationID.UUID)
		var next *governance.ExecutableGateBinding
		seen := false
		for _, b := range snap.GateBindings() {
			if !b.AppliesTo(tool) {
				continue
			}
			if seen {
				next = &b
				break
			}
			seen = b.GateID() == p["gate_id"]
		}
		if next == nil {
			continue
		}
		g := r
		g.RecordID = uuid.New()
		if err := edit(&g, func(p map[string]any) {
			p["gate_id"], p["level"], p["module_digest"], p["decision"], p["reason_code"] = next.GateID(), string(next.Level()), next.ModuleDigest(), "allow", "forged.ok"
		}); err != nil {
			return nil, err
		}
		return insert(recs, i+1, g), nil
	}
	return nil, fmt.Errorf("forgetest: no hard deny before its tool's last binding")
}

func payloadOf(r governance.EvidenceRecord) (map[string]any, error) {
	v, err := governance.ParseJSON([]byte(r.PayloadJSON))
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("forgetest: payload is not an object")
	}
	return m, nil
}

// edit rewrites a record's payload (canonically); the caller re-hashes.
func edit(r *governance.EvidenceRecord, f func(map[string]any)) error {
	m, err := payloadOf(*r)
	if err != nil {
		return err
	}
	f(m)
	text, err := governance.Canonical(m)
	if err != nil {
		return err
	}
	r.PayloadJSON = string(text)
	return nil
}

func find(recs []governance.EvidenceRecord, match func(governance.EvidenceRecord, map[string]any) bool) int {
	for i, r := range recs {
		p, err := payloadOf(r)
		if err == nil && match(r, p) {
			return i
		}
	}
	return -1
}

func insert(recs []governance.EvidenceRecord, at int, add ...governance.EvidenceRecord) []governance.EvidenceRecord {
	out := make([]governance.EvidenceRecord, 0, len(recs)+len(add))
	out = append(out, recs[:at]...)
	out = append(out, add...)
	return append(out, recs[at:]...)
}

func closeAt(recs []governance.EvidenceRecord) int {
	for i, r := range recs {
		if r.RecordType == governance.TaskClosed {
			return i
		}
	}
	return len(recs)
}

func endsCallable(recs []governance.EvidenceRecord, op uuid.UUID) bool {
	for _, r := range recs {
		if r.OperationID.UUID == op && (r.RecordType == governance.CallableCompleted || r.RecordType == governance.CallableFailed) {
			return true
		}
	}
	return false
}

func toolOf(recs []governance.EvidenceRecord, op uuid.UUID) string {
	for _, r := range recs {
		if r.OperationID.UUID == op && r.RecordType == governance.OperationStarted {
			p, _ := payloadOf(r)
			s, _ := p["tool_id"].(string)
			return s
		}
	}
	return ""
}
