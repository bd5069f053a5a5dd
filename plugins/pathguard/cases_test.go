package pathguard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/plugins/internal/gatetable"
	"github.com/govhost/govhost/plugins/pathguard"
)

// loadCases reads the shared table (also run through the .wasm module by
// plugins/builtin).
func loadCases(t testing.TB) gatetable.File {
	t.Helper()
	return gatetable.Load(t, "testdata/cases.json", "pathguard")
}

// TestGate_Evaluate_Cases runs the whole shared table natively.
func TestGate_Evaluate_Cases(t *testing.T) {
	for _, tc := range loadCases(t).Cases {
		t.Run(tc.Name, func(t *testing.T) {
			g, err := pathguard.New(tc.Config)
			require.NoError(t, err)
			tc.Check(t, g.Evaluate(tc.Input))
		})
	}
}
