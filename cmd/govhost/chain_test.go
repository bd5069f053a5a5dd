package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func lastHash(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("testdata/chain.jsonl")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var rec struct {
		ChainHash string `json:"chain_hash"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &rec))
	return rec.ChainHash
}

func TestChainVerify_ReferenceChain(t *testing.T) {
	head := lastHash(t)
	code, stdout, stderr := runCLI(t, "", "chain", "verify", "--file", "testdata/chain.jsonl", "--expected-head", head)
	require.Equal(t, exitOK, code, stderr)
	require.JSONEq(t, `{"valid":true,"verified_head":"`+head+`","checked_records":6,"failure_code":null,"failed_record_id":null}`, stdout)
}

func TestChainVerify_Tampered(t *testing.T) {
	data, err := os.ReadFile("testdata/chain.jsonl")
	require.NoError(t, err)
	head := lastHash(t)
	path := filepath.Join(t.TempDir(), "tampered.jsonl")
	// Change one approved payload value of the third record.
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	lines[2] = strings.Replace(lines[2], `duration_us\":`, `duration_us\":1`, 1)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	code, stdout, _ := runCLI(t, "", "chain", "verify", "--file", path, "--expected-head", head)
	require.Equal(t, exitInvalid, code)
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.Equal(t, "content_mismatch", res["failure_code"])
	require.Equal(t, float64(2), res["checked_records"])

	// A wrong trusted head.
	code, stdout, _ = runCLI(t, "", "chain", "verify", "--file", "testdata/chain.jsonl", "--expected-head", strings.Repeat("0", 64))
	require.Equal(t, exitInvalid, code)
	require.Contains(t, stdout, `"broken_link"`)
}

func TestChainVerify_InputErrors(t *testing.T) {
	data, err := os.ReadFile("testdata/chain.jsonl")
	require.NoError(t, err)
	truncated := filepath.Join(t.TempDir(), "truncated.jsonl")
	require.NoError(t, os.WriteFile(truncated, data[:len(data)-30], 0o600))
	head := lastHash(t)
	cases := map[string]struct {
		args []string
		want string
	}{
		"truncated last line": {[]string{"--file", truncated, "--expected-head", head}, "line 6"},
		"missing file":        {[]string{"--file", "nope.jsonl", "--expected-head", head}, "no such file"},
		"bad head":            {[]string{"--file", truncated, "--expected-head", "ABC"}, "expected-head"},
		"no file flag":        {[]string{"--expected-head", head}, "--file is required"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"chain", "verify"}, c.args...)...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, stdout)
			require.Contains(t, stderr, c.want)
		})
	}
}

// requireExportRoundTrips exports the chain a demo run printed and checks
// that chain verify accepts it against the certificate's head (called from
// the demo test, which has a data directory at hand).
func requireExportRoundTrips(t *testing.T, data, stdout string) {
	t.Helper()
	m := regexp.MustCompile(`chain ([0-9a-f-]{36}): `).FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	head := regexp.MustCompile(`"evidence_chain_head": "([0-9a-f]{64})"`).FindStringSubmatch(stdout)
	require.NotNil(t, head, stdout)

	code, exported, stderr := runCLI(t, "", "chain", "export", "--data", data, "--chain", m[1])
	require.Equal(t, exitOK, code, stderr)
	require.Greater(t, strings.Count(exported, "\n"), 10)
	code, out, stderr := runCLI(t, exported, "chain", "verify", "--file", "-", "--expected-head", head[1])
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, `"valid":true`)

	file := filepath.Join(t.TempDir(), "chain.jsonl")
	code, _, stderr = runCLI(t, "", "chain", "export", "--data", data, "--chain", m[1], "--out", file)
	require.Equal(t, exitOK, code, stderr)
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, exported, string(written))

	// A tampered export does not verify against the certificate's head.
	tampered := strings.Replace(exported, `"sequence":3,`, `"sequence":4,`, 1)
	require.NotEqual(t, exported, tampered)
	code, out, _ = runCLI(t, tampered, "chain", "verify", "--file", "-", "--expected-head", head[1])
	require.Equal(t, exitInvalid, code)
	require.Contains(t, out, `"valid":false`)

	code, _, stderr = runCLI(t, "", "chain", "export", "--data", data, "--chain", "00000000-0000-4000-8000-000000000001")
	require.Equal(t, exitInvalid, code)
	require.Contains(t, stderr, "no records")
	code, _, stderr = runCLI(t, "", "chain", "export", "--data", data, "--chain", "nope")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "--chain")
}
