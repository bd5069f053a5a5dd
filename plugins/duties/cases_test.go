package duties_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/plugins/duties"
	"github.com/govhost/govhost/plugins/internal/gatetable"
)

// TestGate_Evaluate_Cases runs the shared table natively (plugins/builtin
// runs it through the .wasm module).
func TestGate_Evaluate_Cases(t *testing.T) {
	for _, tc := range gatetable.Load(t, "testdata/cases.json", "duties").Cases {
		t.Run(tc.Name, func(t *testing.T) {
			g, err := duties.New(tc.Config)
			require.NoError(t, err)
			tc.Check(t, g.Evaluate(tc.Input))
		})
	}
}

func TestNew_RefusesConfig(t *testing.T) {
	for name, cfg := range map[string]string{
		"empty":          ``,
		"no duties":      `{"incompatible":{}}`,
		"unknown field":  `{"incompatible":{"merge":["write"]},"symmetric":true}`,
		"empty list":     `{"incompatible":{"merge":[]}}`,
		"empty duty":     `{"incompatible":{"merge":[""]}}`,
		"self":           `{"incompatible":{"merge":["merge"]}}`,
		"not an object":  `[]`,
		"empty duty key": `{"incompatible":{"":["write"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := duties.New([]byte(cfg))
			require.ErrorIs(t, err, duties.ErrConfig)
		})
	}
}
