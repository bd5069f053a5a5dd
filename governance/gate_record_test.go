package governance_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

func gateRecordOf(t *testing.T, p governance.GateEvaluatedPayload) map[string]any {
	t.Helper()
	r, err := governance.NextRecord(governance.EmptyHead, governance.RecordSpec{Type: governance.GateEvaluated, ChainID: uuid.New(), PolicyID: uuid.New(), PolicyVersion: "1", Payload: p.Fields()})
	require.NoError(t, err)
	v, err := governance.ParseJSON([]byte(r.PayloadJSON))
	require.NoError(t, err)
	return v.(map[string]any)
}

func TestGateEvaluatedPayload_RoundTrip(t *testing.T) {
	d := governance.SHA256Hex([]byte("x"))
	for name, p := range map[string]governance.GateEvaluatedPayload{
		"plain": {GateID: "g", Level: governance.LevelHard, Decision: governance.Allow, ReasonCode: "ok", Phase: governance.PhaseCheck, ArgumentDigest: d, ModuleDigest: d, DurationMicros: 12},
		"excused": {GateID: "g", Level: governance.LevelSoft, Decision: governance.Deny, ReasonCode: "no", Phase: governance.PhaseRecheck, ArgumentDigest: d, ModuleDigest: d,
			ExceptionGrantID: uuid.NullUUID{UUID: uuid.New(), Valid: true}, BreakGlass: true},
		"approved": {GateID: "g", Level: governance.LevelSoft, Decision: governance.Allow, ReasonCode: "ask", Phase: governance.PhaseCheck, ArgumentDigest: d, ModuleDigest: d, OutputArgumentDigest: governance.SHA256Hex([]byte("y")),
			Approval: &governance.GateApproval{GateReasonCode: "ask", Outcome: governance.ApprovalApproved, DecidedAt: time.Date(2026, 12, 5, 1, 2, 3, 4000, time.UTC), Approver: &governance.ActorRef{Kind: "operator", ID: "ana"}}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := governance.ParseGateEvaluated(gateRecordOf(t, p))
			require.NoError(t, err)
			require.Equal(t, p, got)
		})
	}
}

func TestParseGateEvaluated_Refuses(t *testing.T) {
	d := governance.SHA256Hex([]byte("x"))
	base := governance.GateEvaluatedPayload{GateID: "g", Level: governance.LevelHard, Decision: governance.Deny, ReasonCode: "no", Phase: governance.PhaseCheck, ArgumentDigest: d, ModuleDigest: d}
	for name, c := range map[string]struct {
		edit  func(m map[string]any)
		field string
	}{
		"unknown member":            {func(m map[string]any) { m["note"] = "x" }, "note"},
		"missing gate":              {func(m map[string]any) { delete(m, "gate_id") }, "gate_id"},
		"bad level":                 {func(m map[string]any) { m["level"] = "mild" }, "level"},
		"bad decision":              {func(m map[string]any) { m["decision"] = "require_approval" }, "decision"},
		"bad phase":                 {func(m map[string]any) { m["phase"] = "later" }, "phase"},
		"bad digest":                {func(m map[string]any) { m["module_digest"] = "ABC" }, "module_digest"},
		"duration text":             {func(m map[string]any) { m["duration_us"] = "5" }, "duration_us"},
		"break glass without grant": {func(m map[string]any) { m["break_glass"] = true }, "break_glass"},
		"grant on an allow": {func(m map[string]any) {
			m["decision"], m["exception_grant_id"] = "allow", uuid.NewString()
		}, "exception_grant_id"},
		"approval without gate_decision": {func(m map[string]any) { m["approval"] = "approved" }, "approval"},
		"approver half": {func(m map[string]any) {
			m["gate_decision"], m["gate_reason_code"], m["approval"], m["approver_kind"] = "require_approval", "x", "approved", "operator"
		}, "approver_kind"},
	} {
		t.Run(name, func(t *testing.T) {
			m := gateRecordOf(t, base)
			c.edit(m)
			_, err := governance.ParseGateEvaluated(m)
			var ve *governance.ValidationError
			require.ErrorAs(t, err, &ve)
			require.Equal(t, c.field, ve.Field)
		})
	}
}
