package certify_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/certify/forgetest"
	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// TestForgeries_RefusedAtCheckVerifyAndMint: each forgery of issue 27,
// made from a real task's chain, re-hashed, with the certificate's head
// and recounted summary and a checkpoint re-signed with the signing key,
// is refused by Check, by offline Verify with the key, and at mint by the
// controller's issuer over a store holding the forged chain.
func TestForgeries_RefusedAtCheckVerifyAndMint(t *testing.T) {
	kr, err := checkpoint.OpenKeyring(filepath.Join(t.TempDir(), "keys"))
	require.NoError(t, err)
	signer, err := kr.Signer()
	require.NoError(t, err)
	vkey, err := kr.VerifierKey()
	require.NoError(t, err)
	for _, f := range forgetest.All() {
		t.Run(f.Name, func(t *testing.T) {
			tk := runTask(t, false)
			ctx := context.Background()
			recs, snap := tk.recs, tk.snap
			if f.Records != nil {
				recs, err = f.Records(recs, snap)
				require.NoError(t, err)
			}
			if f.Policy != nil {
				snap, err = f.Policy(snap)
				require.NoError(t, err)
			}
			recs, head, err := forgetest.Rechain(recs)
			require.NoError(t, err)

			_, err = certify.Check(certify.Evidence{Boundary: tk.boundary, Records: recs, ExpectedHead: head, Policy: &snap})
			requireRule(t, f.Rule, err)

			cert := tk.cert
			cert.EvidenceChainHead, cert.GateSummary = head, forgetest.Summary(recs)
			note, err := checkpoint.Sign(checkpoint.For(tk.boundary.ChainID, int64(len(recs)), head), signer)
			require.NoError(t, err)
			rep := certify.Verify(certify.Bundle{Certificate: cert, Records: recs, Policy: &snap, Checkpoint: note}, certify.VerifyOptions{Keys: []string{vkey}})
			require.False(t, rep.Valid)
			require.Equal(t, f.Rule, *rep.Rule, *rep.Reason)

			store := evidence.NewMemStore()
			_, err = evidence.AppendAll(ctx, store, recs)
			require.NoError(t, err)
			policies := tk.policies
			if f.Policy != nil {
				ps := policy.NewMemStore(policy.AvailabilityFuncs{Adapter: func(string) bool { return true }, Module: func(string) bool { return true }})
				require.NoError(t, ps.Put(ctx, snap))
				policies = ps
			}
			_, err = (&controller.CertificateIssuer{Evidence: store, Policies: policies}).Mint(ctx, tk.boundary, head)
			requireRule(t, f.Rule, err)
		})
	}
}

// TestForgeries_ControlPasses: the honest part of a forgery (an operation
// denied for no binding, with no gate record) is accepted, so the
// forgeries above are refused for what they add.
func TestForgeries_ControlPasses(t *testing.T) {
	tk := runTask(t, false)
	recs, _, err := forgetest.UnboundOperation(tk.recs, tk.snap, "forged.unbound")
	require.NoError(t, err)
	recs, head, err := forgetest.Rechain(recs)
	require.NoError(t, err)
	snap := tk.snap
	out, err := certify.Check(certify.Evidence{Boundary: tk.boundary, Records: recs, ExpectedHead: head, Policy: &snap})
	require.NoError(t, err)
	require.Equal(t, tk.cert.GateSummary, out.Summary)
}

func requireRule(t *testing.T, rule governance.CertificateRule, err error) {
	t.Helper()
	var ce *governance.CertificateError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, rule, ce.Rule, ce.Reason)
}
