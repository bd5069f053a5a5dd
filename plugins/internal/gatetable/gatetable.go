// Package gatetable reads a built-in gate's decision table
// (plugins/<name>/testdata/cases.json) and checks a verdict against a case.
// The same table runs natively in the gate's own tests and through the
// built .wasm module in plugins/builtin, so both answer from one file. Only
// tests import it.
package gatetable

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
)

// File is the shape of a cases.json.
type File struct {
	Gate        string `json:"gate"`
	Description string `json:"description,omitempty"`
	Cases       []Case `json:"cases"`
}

// Case is one request with the verdict it must get. Config is the gate's
// configuration (absent: the gate's default). In Want, a nil text field is
// not checked.
type Case struct {
	Name                 string          `json:"name"`
	Source               string          `json:"source,omitempty"`
	Note                 string          `json:"note,omitempty"`
	StricterThanOriginal string          `json:"stricter_than_original,omitempty"` // how and why, when it is
	Config               json.RawMessage `json:"config,omitempty"`
	Input                abi.GateInput   `json:"input"`
	Want                 struct {
		Decision    abi.Decision `json:"decision"`
		ReasonCode  string       `json:"reason_code"`
		Message     *string      `json:"message,omitempty"`
		Detail      *string      `json:"detail,omitempty"`
		MatchedRule *string      `json:"matched_rule,omitempty"`
	} `json:"want"`
}

// Load reads the table at path, checks that it is gate's and that case
// names are unique.
func Load(t testing.TB, path, gate string) File {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var f File
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&f), path)
	require.Equal(t, gate, f.Gate, path)
	require.NotEmpty(t, f.Cases, path)
	seen := map[string]bool{}
	for _, c := range f.Cases {
		require.False(t, seen[c.Name], "%s: duplicate case name %q", path, c.Name)
		seen[c.Name] = true
	}
	return f
}

// Check asserts that got is the verdict c wants, and the invariants every
// built-in check gate keeps: a decision of the closed set, a model-facing
// message exactly when it does not allow, and arguments never rewritten.
func (c Case) Check(t testing.TB, got abi.GateOutput) {
	t.Helper()
	require.True(t, got.Decision.Valid(), "%s: decision %q", c.Name, got.Decision)
	require.Equal(t, c.Want.Decision, got.Decision, "%s: reason %s: %s", c.Name, got.ReasonCode, got.Detail)
	require.Equal(t, c.Want.ReasonCode, got.ReasonCode, "%s: %s", c.Name, got.Detail)
	for _, f := range []struct {
		field string
		want  *string
		got   string
	}{{"message", c.Want.Message, got.Message}, {"detail", c.Want.Detail, got.Detail}, {"matched_rule", c.Want.MatchedRule, got.MatchedRule}} {
		if f.want != nil {
			require.Equal(t, *f.want, f.got, "%s: %s", c.Name, f.field)
		}
	}
	if got.Decision == abi.DecisionAllow {
		require.Empty(t, got.Message, "%s: an allow carries no model-facing text", c.Name)
	} else {
		require.NotEmpty(t, got.Message, "%s: a %s carries the model-facing text", c.Name, got.Decision)
	}
	require.Empty(t, got.Arguments, "%s: a check gate never rewrites arguments", c.Name)
}
