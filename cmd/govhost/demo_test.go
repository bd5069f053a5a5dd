package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDemo_RunsTwiceOnOneDataDirectory runs the main job as `make run`
// does, twice: the second run reuses the stored policy version and adds a
// second task chain that verifies too.
func TestDemo_RunsTwiceOnOneDataDirectory(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	var stdout string
	for run := 0; run < 2; run++ {
		var code int
		var stderr string
		code, stdout, stderr = runCLI(t, "", "demo", "--data", data)
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, stdout, `"valid":true`)
		require.Contains(t, stdout, `"process_grade": "FULL"`)
		require.Contains(t, stdout, "destructive.rm_recursive_force")
		require.Contains(t, stdout, "path.outside_root")
		require.Equal(t, 3, strings.Count(stdout, "  allow  "))
		require.Equal(t, 3, strings.Count(stdout, "  deny   "))
	}
	requireExportRoundTrips(t, data, stdout)
	code, _, stderr := runCLI(t, "", "demo", "extra")
	require.Equal(t, exitUsage, code, stderr)
}
