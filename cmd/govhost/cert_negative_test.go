package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// rewriteChain rehashes recs into a consistent chain (as a forger holding
// the bundle would), writes it into the bundle and points the
// certificate at its new head: only the semantic rules can catch the edit.
func rewriteChain(t *testing.T, dir string, recs []governance.EvidenceRecord) {
	t.Helper()
	head := governance.EmptyHead
	var out []governance.EvidenceRecord
	for _, r := range recs {
		p, err := governance.ParseJSON([]byte(r.PayloadJSON))
		require.NoError(t, err)
		n, err := governance.NextRecord(head, governance.RecordSpec{
			RecordID: r.RecordID, Type: r.RecordType, ChainID: r.ChainID, OperationID: r.OperationID,
			PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion, Payload: p,
			SupersedesRecordID: r.SupersedesRecordID, CreatedAt: r.CreatedAt,
		})
		require.NoError(t, err)
		out = append(out, n)
		head = n.Head()
	}
	var buf bytes.Buffer
	require.NoError(t, evidence.WriteJSONL(&buf, out))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "chain.jsonl"), buf.Bytes(), 0o644))
	cert := filepath.Join(dir, "certificate.json")
	b, err := os.ReadFile(cert)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cert, []byte(withHead(string(b), head.Hash)), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "checkpoint")))
}

// withHead returns a certificate's JSON with another evidence_chain_head.
func withHead(cert, head string) string {
	i := strings.Index(cert, `"evidence_chain_head":"`) + len(`"evidence_chain_head":"`)
	return cert[:i] + head + cert[i+64:]
}

func readRecords(t *testing.T, dir string) []governance.EvidenceRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "chain.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var recs []governance.EvidenceRecord
	require.NoError(t, evidence.ReadJSONL(f, func(r governance.EvidenceRecord) bool { recs = append(recs, r); return true }))
	return recs
}

func find(recs []governance.EvidenceRecord, typ governance.EvidenceType) int {
	for i, r := range recs {
		if r.RecordType == typ {
			return i
		}
	}
	return -1
}

// TestCertVerify_BadInput: the bad inputs, each through
// `govhost cert verify`, each refused with its rule (exit 1) or, for a
// line no strict reader accepts, as malformed input (exit 2).
func TestCertVerify_BadInput(t *testing.T) {
	data, task := demoTask(t)
	good := filepath.Join(t.TempDir(), "good")
	code, _, stderr := runCLI(t, "", "cert", "bundle", "--data", data, "--task", task, "--out", good)
	require.Equal(t, exitOK, code, stderr)

	edit := func(name string, f func(s string) string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, name)
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			out := f(string(b))
			require.NotEqual(t, string(b), out, "edit changed nothing")
			require.NoError(t, os.WriteFile(p, []byte(out), 0o644))
		}
	}
	records := func(f func(recs []governance.EvidenceRecord) []governance.EvidenceRecord) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { rewriteChain(t, dir, f(readRecords(t, dir))) }
	}
	cases := map[string]struct {
		mutate func(t *testing.T, dir string)
		exit   int
		rule   string
		code   string
	}{
		"open boundary": {records(func(r []governance.EvidenceRecord) []governance.EvidenceRecord { return r[:len(r)-1] }), exitInvalid, "task_closed", ""},
		"missing terminal": {records(func(r []governance.EvidenceRecord) []governance.EvidenceRecord {
			i := find(r, governance.CallableCompleted)
			return append(r[:i:i], r[i+1:]...)
		}), exitInvalid, "terminal", ""},
		"duplicate terminal": {records(func(r []governance.EvidenceRecord) []governance.EvidenceRecord {
			i := find(r, governance.CallableCompleted)
			dup := r[i]
			dup.RecordID = uuid.New()
			return append(append(r[:i+1:i+1], dup), r[i+1:]...)
		}), exitInvalid, "terminal", ""},
		"completion after a deny": {records(func(r []governance.EvidenceRecord) []governance.EvidenceRecord {
			r[find(r, governance.OperationDenied)].RecordType = governance.CallableCompleted
			return r
		}), exitInvalid, "deny_then_call", ""},
		"operation with a missing gate record": {records(func(r []governance.EvidenceRecord) []governance.EvidenceRecord {
			i := find(r, governance.GateEvaluated)
			return append(r[:i:i], r[i+1:]...)
		}), exitInvalid, "gate_coverage", ""},
		"closed_at before opened_at": {records(func(r []governance.EvidenceRecord) []governance.EvidenceRecord {
			last := &r[len(r)-1]
			v, _ := governance.ParseJSON([]byte(last.PayloadJSON))
			m := v.(map[string]any)
			m["closed_at"] = "2000-01-01T00:00:00.000000Z"
			text, _ := governance.Canonical(m)
			last.PayloadJSON = string(text)
			return r
		}), exitInvalid, "boundary", ""},
		"changed payload byte":             {edit("chain.jsonl", func(s string) string { return strings.Replace(s, `\"tool_id\":\"read\"`, `\"tool_id\":\"reaD\"`, 1) }), exitInvalid, "chain", "content_mismatch"},
		"head mismatch":                    {edit("certificate.json", func(s string) string { return withHead(s, strings.Repeat("0", 64)) }), exitInvalid, "chain", "broken_link"},
		"certificate grade edited":         {edit("certificate.json", func(s string) string { return strings.Replace(s, `"FULL"`, `"DEGRADED"`, 1) }), exitInvalid, "grade", ""},
		"missing policy":                   {func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "policy.json"))) }, exitInvalid, "policy", "missing_policy"},
		"policy digest does not recompute": {edit("policy.json", func(s string) string { return strings.Replace(s, `"level":"hard"`, `"level":"soft"`, 1) }), exitInvalid, "policy", "missing_policy"},
		"respelled UUID": {edit("chain.jsonl", func(s string) string {
			i := strings.Index(s, `"record_id":"`) + 13
			return s[:i] + strings.ToUpper(s[i:i+36]) + s[i+36:]
		}), exitUsage, "", ""},
		"respelled time": {edit("chain.jsonl", func(s string) string { i := strings.Index(s, `"created_at":"`) + 14 + 19; return s[:i] + "," + s[i+1:] }), exitUsage, "", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "b")
			require.NoError(t, os.CopyFS(dir, os.DirFS(good)))
			c.mutate(t, dir)
			code, stdout, stderr := runCLI(t, "", "cert", "verify", dir)
			require.Equal(t, c.exit, code, "stdout %s stderr %s", stdout, stderr)
			if c.exit == exitUsage {
				require.Contains(t, stderr, "line 1")
				return
			}
			rep := verifyReport(t, exitInvalid, dir)
			require.Equal(t, c.rule, rep["rule"], "%v", rep["reason"])
			if c.code == "" {
				require.Nil(t, rep["failure_code"])
			} else {
				require.Equal(t, c.code, rep["failure_code"])
			}
		})
	}
}
