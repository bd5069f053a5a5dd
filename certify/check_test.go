package certify_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// TestCheck_TaskWithDenialsAndFailuresIsFull: denials, a callable failure
// and an advisory deny are process adherence, not failures: FULL, with the
// summary recounted from the gate records.
func TestCheck_TaskWithDenialsAndFailuresIsFull(t *testing.T) {
	tk := runTask(t, false)
	require.Equal(t, governance.GradeFull, tk.cert.ProcessGrade)
	// ls: guard+perm allow; rm: guard deny; fail: guard+perm allow;
	// /etc: perm deny; notes: perm allow, audit deny.
	require.Equal(t, governance.GateSummary{HardAllow: 2, HardDeny: 1, SoftAllow: 3, SoftDeny: 1, AdvisoryDeny: 1}, tk.cert.GateSummary)
	out, err := certify.Check(tk.evidence())
	require.NoError(t, err)
	require.Equal(t, tk.cert.GateSummary, out.Summary)
}

func TestCheck_ExceptionIsDegraded(t *testing.T) {
	tk := runTask(t, true)
	require.Equal(t, governance.GradeDegraded, tk.cert.ProcessGrade)
	require.Equal(t, 1, tk.cert.GateSummary.ExceptionCount)
}

// TestCheck_Refuses: each mutation, rehashed into a consistent chain,
// fails exactly its rule.
func TestCheck_Refuses(t *testing.T) {
	cases := map[string]struct {
		grant  bool
		mutate func(t *testing.T, tk *task, ev *certify.Evidence)
		rule   governance.CertificateRule
		code   governance.VerificationFailureCode
	}{
		"closed_at before opened_at": {mutate: func(_ *testing.T, _ *task, ev *certify.Evidence) {
			ev.Boundary.ClosedAt = ev.Boundary.OpenedAt.Add(-time.Second)
		}, rule: governance.RuleBoundary},
		"head mismatch": {mutate: func(_ *testing.T, _ *task, ev *certify.Evidence) {
			ev.ExpectedHead = governance.SHA256Hex([]byte("elsewhere"))
		}, rule: governance.RuleChain, code: governance.BrokenLink},
		"changed payload byte": {mutate: func(_ *testing.T, _ *task, ev *certify.Evidence) {
			r := ev.Records[3]
			r.PayloadJSON = r.PayloadJSON[:len(r.PayloadJSON)-2] + "X}"
			ev.Records = append(append(ev.Records[:3:3], r), ev.Records[4:]...)
		}, rule: governance.RuleChain, code: governance.ContentMismatch},
		"open boundary": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			ev.Records, ev.ExpectedHead = rechain(t, ev.Records[:len(ev.Records)-1])
		}, rule: governance.RuleTaskClosed},
		"missing policy": {mutate: func(_ *testing.T, _ *task, ev *certify.Evidence) { ev.Policy = nil }, rule: governance.RulePolicy, code: governance.MissingPolicy},
		"another policy version": {mutate: func(t *testing.T, tk *task, ev *certify.Evidence) {
			other, err := governance.NewPolicySnapshot(tk.snap.PolicyID(), "other", tk.snap.GateBindings())
			require.NoError(t, err)
			ev.Policy = &other
		}, rule: governance.RulePolicy, code: governance.MissingPolicy},
		"policy bound duplicated": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.PolicyBound, 0)
			dup := ev.Records[i]
			dup.RecordID = uuid.New()
			ev.Records, ev.ExpectedHead = rechain(t, append(append(ev.Records[:i+1:i+1], dup), ev.Records[i+1:]...))
		}, rule: governance.RuleTerminal},
		"policy bound removed": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.PolicyBound, 0)
			ev.Records, ev.ExpectedHead = rechain(t, append(ev.Records[:i:i], ev.Records[i+1:]...))
		}, rule: governance.RuleTerminal},
		"policy bound of an operation that never started": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.PolicyBound, 0)
			stray := ev.Records[i]
			stray.RecordID, stray.OperationID = uuid.New(), uuid.NullUUID{UUID: uuid.New(), Valid: true}
			ev.Records, ev.ExpectedHead = rechain(t, append(append(ev.Records[:i+1:i+1], stray), ev.Records[i+1:]...))
		}, rule: governance.RuleTerminal},
		"policy bound counts other bindings": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			setPayload(t, &ev.Records[indexOf(ev.Records, governance.PolicyBound, 0)], func(m map[string]any) { m["gate_count"] = 7 })
			ev.Records, ev.ExpectedHead = rechain(t, ev.Records)
		}, rule: governance.RuleOperationPolicy},
		"missing terminal": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.CallableFailed, 0)
			ev.Records, ev.ExpectedHead = rechain(t, append(ev.Records[:i:i], ev.Records[i+1:]...))
		}, rule: governance.RuleTerminal},
		"duplicate terminal": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.CallableFailed, 0)
			dup := ev.Records[i]
			dup.RecordID = uuid.New()
			ev.Records, ev.ExpectedHead = rechain(t, append(append(ev.Records[:i+1:i+1], dup), ev.Records[i+1:]...))
		}, rule: governance.RuleTerminal},
		"completion after a deny": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.OperationDenied, 0)
			done := ev.Records[i]
			done.RecordID, done.RecordType = uuid.New(), governance.CallableCompleted
			ev.Records, ev.ExpectedHead = rechain(t, append(append(ev.Records[:i+1:i+1], done), ev.Records[i+1:]...))
		}, rule: governance.RuleDenyThenCall},
		"callable after a hard deny": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.OperationDenied, 0)
			ev.Records[i].RecordType = governance.CallableCompleted
			ev.Records, ev.ExpectedHead = rechain(t, ev.Records)
		}, rule: governance.RuleDenyThenCall},
		"operation with a missing gate record": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.GateEvaluated, 1) // perm of `ls`
			ev.Records, ev.ExpectedHead = rechain(t, append(ev.Records[:i:i], ev.Records[i+1:]...))
		}, rule: governance.RuleGateCoverage},
		"gate record with another level": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.GateEvaluated, 0)
			setPayload(t, &ev.Records[i], func(m map[string]any) { m["level"] = "advisory" })
			ev.Records, ev.ExpectedHead = rechain(t, ev.Records)
		}, rule: governance.RuleGateCoverage},
		"operation pinned to another policy version": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.OperationStarted, 0)
			ev.Records[i].PolicyVersion = "2026.12.2"
			ev.Records, ev.ExpectedHead = rechain(t, ev.Records)
		}, rule: governance.RuleOperationPolicy},
		"operation naming another policy digest": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.PolicyBound, 0)
			setPayload(t, &ev.Records[i], func(m map[string]any) { m["policy_digest"] = governance.SHA256Hex(nil) })
			ev.Records, ev.ExpectedHead = rechain(t, ev.Records)
		}, rule: governance.RuleOperationPolicy},
		"chain spliced from two tasks": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			other := runTask(t, false)
			i := indexOf(other.recs, governance.PolicyBound, 1)
			spliced := append(append([]governance.EvidenceRecord{}, ev.Records[:len(ev.Records)-1]...), other.recs[i:i+5]...)
			spliced = append(spliced, ev.Records[len(ev.Records)-1])
			for j := range spliced {
				spliced[j].ChainID = ev.Boundary.ChainID
			}
			ev.Records, ev.ExpectedHead = rechain(t, spliced)
		}, rule: governance.RuleTaskRecords, code: governance.BrokenLink},
		"excused deny without a grant": {grant: true, mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			i := indexOf(ev.Records, governance.ExceptionGranted, 0)
			ev.Records, ev.ExpectedHead = rechain(t, append(ev.Records[:i:i], ev.Records[i+1:]...))
		}, rule: governance.RuleException},
		"records after TASK_CLOSED": {mutate: func(t *testing.T, _ *task, ev *certify.Evidence) {
			extra := ev.Records[indexOf(ev.Records, governance.GateEvaluated, 0)]
			extra.RecordID = uuid.New()
			ev.Records, ev.ExpectedHead = rechain(t, append(append([]governance.EvidenceRecord{}, ev.Records...), extra))
		}, rule: governance.RuleTaskClosed},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tk := runTask(t, c.grant)
			ev := tk.evidence()
			ev.Records = append([]governance.EvidenceRecord(nil), ev.Records...)
			c.mutate(t, tk, &ev)
			_, err := certify.Check(ev)
			var ce *governance.CertificateError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, c.rule, ce.Rule, "%v", err)
			require.Equal(t, c.code, ce.Code, "%v", err)
		})
	}
}

// BenchmarkCheck: every mint rule over a 30-record task chain, against
// chain verification alone of the same records (the reference: Check
// runs it first).
func BenchmarkCheck(b *testing.B) {
	tk := runTask(b, true)
	ev := tk.evidence()
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := certify.Check(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify_only", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if res := evidence.VerifyRecords(ev.Records, ev.ExpectedHead); !res.Valid {
				b.Fatal(res)
			}
		}
	})
}
