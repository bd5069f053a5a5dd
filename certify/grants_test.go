package certify_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/governance"
)

func count(recs []governance.EvidenceRecord, typ governance.EvidenceType) int {
	n := 0
	for _, r := range recs {
		if r.RecordType == typ {
			n++
		}
	}
	return n
}

func grantFor(tk *task, gate, tool string, who governance.ActorRef, issued, expires time.Time) governance.ExceptionGrant {
	return governance.ExceptionGrant{
		Actor: who, GateID: gate, ToolID: tool, PolicyID: tk.snap.PolicyID(), PolicyVersion: tk.snap.Version(),
		ReasonCode: "incident.4711", IssuedAt: issued, ExpiresAt: expires,
	}
}

// TestBreakGlass: a break-glass grant excuses the hard deny of rm; the
// task mints DEGRADED, and its bundle verifies offline.
func TestBreakGlass(t *testing.T) {
	tk := runTaskWith(t, func(ctx context.Context, tk *task, chain uuid.UUID) {
		now := time.Now()
		_, err := tk.ctl.BreakGlass(ctx, chain, grantFor(tk, "guard", "bash", actor, now.Add(-time.Second), now.Add(time.Hour)))
		require.NoError(t, err)
	})
	require.Equal(t, governance.GradeDegraded, tk.cert.ProcessGrade)
	require.Equal(t, 1, count(tk.recs, governance.OperationDenied), "only the soft deny of /etc is left")
	require.Equal(t, 1, tk.cert.GateSummary.HardDeny, "the gate's deny is recorded as a deny")
	dir, vkey, _ := signedBundle(t, tk)
	rep := verifyDir(t, dir, certify.VerifyOptions{Keys: []string{vkey}})
	require.True(t, rep.Valid, "%+v", rep)
	require.Equal(t, governance.GradeDegraded, rep.ProcessGrade)

	// A forger turning the break-glass grant into an ordinary one is caught:
	// an ordinary grant cannot excuse a hard deny.
	ev := tk.evidence()
	i := indexOf(ev.Records, governance.ExceptionGranted, 0)
	setPayload(t, &ev.Records[i], func(m map[string]any) { m["break_glass"] = false })
	ev.Records, ev.ExpectedHead = rechain(t, ev.Records)
	_, err := certify.Check(ev)
	var ce *governance.CertificateError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, governance.RuleException, ce.Rule)
}

// TestBreakGlass_NeedsReasonAndExpiry: no reason or no expiry is refused,
// and nothing is recorded.
func TestBreakGlass_NeedsReasonAndExpiry(t *testing.T) {
	runTaskWith(t, func(ctx context.Context, tk *task, chain uuid.UUID) {
		now := time.Now()
		noReason := grantFor(tk, "guard", "bash", actor, now, now.Add(time.Hour))
		noReason.ReasonCode = ""
		_, err := tk.ctl.BreakGlass(ctx, chain, noReason)
		var ve *governance.ValidationError
		require.ErrorAs(t, err, &ve)
		require.Equal(t, "reason_code", ve.Field)
		_, err = tk.ctl.BreakGlass(ctx, chain, grantFor(tk, "guard", "bash", actor, now, time.Time{}))
		require.ErrorAs(t, err, &ve)
		require.Equal(t, "expires_at", ve.Field)
		_, err = tk.ctl.BreakGlass(ctx, chain, grantFor(tk, "guard", "bash", actor, now, now))
		require.ErrorAs(t, err, &ve, "expiry must be later than issue")
		recs, _ := tk.store.Read(ctx, chain, -1)
		require.Empty(t, recs)
	})
}

// TestGrants_DenyOnExpiryMismatchAmbiguityReuse: a time-bounded grant
// (ADR-0087 D8's permit, governance.ExceptionGrant) excuses nothing when it
// expired, names another actor, tool or gate, when two grants could match,
// for a hard gate when it is not break-glass, or once it was used.
func TestGrants_DenyOnExpiryMismatchAmbiguityReuse(t *testing.T) {
	stranger := governance.ActorRef{Kind: "agent", ID: "other"}
	cases := map[string]func(ctx context.Context, tk *task, chain uuid.UUID){
		"expired": func(ctx context.Context, tk *task, chain uuid.UUID) {
			now := time.Now()
			_, err := tk.ctl.GrantException(ctx, chain, grantFor(tk, "perm", "read", actor, now.Add(-time.Hour), now.Add(-time.Minute)))
			require.NoError(t, err)
		},
		"another actor": func(ctx context.Context, tk *task, chain uuid.UUID) {
			now := time.Now()
			_, err := tk.ctl.GrantException(ctx, chain, grantFor(tk, "perm", "read", stranger, now.Add(-time.Second), now.Add(time.Hour)))
			require.NoError(t, err)
		},
		"another tool": func(ctx context.Context, tk *task, chain uuid.UUID) {
			now := time.Now()
			_, err := tk.ctl.GrantException(ctx, chain, grantFor(tk, "perm", "write", actor, now.Add(-time.Second), now.Add(time.Hour)))
			require.NoError(t, err)
		},
		"ambiguous": func(ctx context.Context, tk *task, chain uuid.UUID) {
			now := time.Now()
			for i := 0; i < 2; i++ {
				_, err := tk.ctl.GrantException(ctx, chain, grantFor(tk, "perm", "read", actor, now.Add(-time.Second), now.Add(time.Hour)))
				require.NoError(t, err)
			}
		},
		"ordinary grant for a hard gate": func(ctx context.Context, tk *task, chain uuid.UUID) {
			now := time.Now()
			_, err := tk.ctl.GrantException(ctx, chain, grantFor(tk, "guard", "bash", actor, now.Add(-time.Second), now.Add(time.Hour)))
			require.NoError(t, err)
		},
	}
	for name, grants := range cases {
		t.Run(name, func(t *testing.T) {
			tk := runTaskWith(t, grants)
			require.Equal(t, 2, count(tk.recs, governance.OperationDenied), "both denials stand")
			require.Equal(t, governance.GradeDegraded, tk.cert.ProcessGrade, "a recorded grant degrades the task even unused")
		})
	}

	// Consumed once: the grant excuses the first /etc read, not a second.
	tk := runTask(t, true)
	require.Equal(t, 1, count(tk.recs, governance.OperationDenied))
	ev := tk.evidence()
	// A second use of the same grant, forged into the chain, is refused.
	var grantID string
	for _, r := range ev.Records {
		if r.RecordType == governance.ExceptionGranted {
			p, _ := governance.ParseJSON([]byte(r.PayloadJSON))
			grantID = p.(map[string]any)["grant_id"].(string)
		}
	}
	j := -1
	for k, r := range ev.Records {
		p, _ := governance.ParseJSON([]byte(r.PayloadJSON))
		if m := p.(map[string]any); r.RecordType == governance.GateEvaluated && m["gate_id"] == "perm" && m["decision"] == "allow" && m["reason_code"] == "perm.ok" {
			j = k
		}
	}
	require.GreaterOrEqual(t, j, 0)
	setPayload(t, &ev.Records[j], func(m map[string]any) { m["exception_grant_id"], m["decision"] = grantID, "deny" })
	ev.Records, ev.ExpectedHead = rechain(t, ev.Records)
	// A second deny excused by the same one-use grant: a verifier counts
	// the grant's uses.
	_, err := certify.Check(ev)
	var ce *governance.CertificateError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, governance.RuleException, ce.Rule)
}

// TestSupersede_StaysDegraded: a correction of the exception, appended
// after TASK_CLOSED, changes nothing recorded and leaves the task
// DEGRADED; its bundle verifies. A correction of an unknown record or
// naming no field is refused and appends nothing.
func TestSupersede_StaysDegraded(t *testing.T) {
	tk := runTask(t, true)
	ctx := context.Background()
	i := indexOf(tk.recs, governance.ExceptionGranted, 0)
	corr, err := tk.ctl.Supersede(ctx, tk.boundary.ChainID, governance.Correction{
		SupersedesRecordID: tk.recs[i].RecordID, CorrectedFields: []string{"reason_code"},
		ReasonCode: "grant.misfiled", Corrections: map[string]any{"reason_code": "incident.4712"},
	})
	require.NoError(t, err)
	require.Equal(t, governance.RecordSuperseded, corr.RecordType)
	require.Equal(t, tk.recs[i].RecordID, corr.SupersedesRecordID.UUID)

	_, err = tk.ctl.Supersede(ctx, tk.boundary.ChainID, governance.Correction{SupersedesRecordID: uuid.New(), CorrectedFields: []string{"x"}, ReasonCode: "r"})
	require.Error(t, err)
	_, err = tk.ctl.Supersede(ctx, tk.boundary.ChainID, governance.Correction{SupersedesRecordID: tk.recs[i].RecordID, ReasonCode: "r"})
	var ve *governance.ValidationError
	require.ErrorAs(t, err, &ve)

	recs, err := tk.store.Read(ctx, tk.boundary.ChainID, -1)
	require.NoError(t, err)
	require.Len(t, recs, len(tk.recs)+1, "one correction appended, nothing mutated")
	require.Equal(t, tk.recs, recs[:len(tk.recs)])
	tk.recs, tk.head = recs, corr.ChainHash
	issuer := controllerIssuer(tk)
	tk.cert, err = issuer.Mint(ctx, tk.boundary, tk.head)
	require.NoError(t, err)
	require.Equal(t, governance.GradeDegraded, tk.cert.ProcessGrade)
	dir, vkey, _ := signedBundle(t, tk)
	rep := verifyDir(t, dir, certify.VerifyOptions{Keys: []string{vkey}})
	require.True(t, rep.Valid, "%+v", rep)
	require.Equal(t, governance.GradeDegraded, rep.ProcessGrade)

	// A correction explaining no field, forged into the chain, is refused.
	ev := tk.evidence()
	ev.Records = append([]governance.EvidenceRecord(nil), ev.Records...)
	n := len(ev.Records) - 1
	setPayload(t, &ev.Records[n], func(m map[string]any) { delete(m, "corrected_fields") })
	ev.Records, ev.ExpectedHead = rechain(t, ev.Records)
	_, err = certify.Check(ev)
	var ce *governance.CertificateError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, governance.RuleCorrection, ce.Rule)
}
