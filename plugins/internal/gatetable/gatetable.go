// Package gatetable reads a built-in gate's decision table
// (plugins/<name>/testdata/cases.json, in gatetest's cases format), the
// gate's specification, and checks a verdict against a case with the
// invariants every built-in gate keeps. plugins/builtin runs each table
// through the embedded module (gatetest.Run, as `govhost test` does). Only
// tests import it.
package gatetable

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk/gatecases"
)

// File is a loaded table.
type File struct {
	gatecases.File
	Cases []Case
}

// Case is one row of the table.
type Case struct{ gatecases.Case }

// Load reads the table at path (gatecases.LoadFile checks its shape and
// unique case names) and checks that it is gate's.
func Load(t testing.TB, path, gate string) File {
	t.Helper()
	f, err := gatecases.LoadFile(path)
	require.NoError(t, err)
	require.Equal(t, gate, f.Gate, path)
	out := File{File: f}
	for _, c := range f.Cases {
		out.Cases = append(out.Cases, Case{c})
	}
	return out
}

// Check asserts that got is the verdict c wants (gatecases.Compare), and the
// invariants every built-in check gate keeps: a decision of the closed set,
// a model-facing message exactly when it does not allow, and arguments
// never rewritten.
func (c Case) Check(t testing.TB, got abi.GateOutput) {
	t.Helper()
	require.True(t, got.Decision.Valid(), "%s: decision %q", c.Name, got.Decision)
	require.Empty(t, gatecases.Compare(c.Want, got), "%s: %s", c.Name, got.Detail)
	if got.Decision == abi.DecisionAllow {
		require.Empty(t, got.Message, "%s: an allow carries no model-facing text", c.Name)
	} else {
		require.NotEmpty(t, got.Message, "%s: a %s carries the model-facing text", c.Name, got.Decision)
	}
	if got.Decision == abi.DecisionRequireApproval {
		require.NotEmpty(t, got.DenyMessage, "%s: an approval request says what a denied approval shows", c.Name)
	} else {
		require.Empty(t, got.DenyMessage, "%s: only an approval request carries a deny_message", c.Name)
	}
	require.Empty(t, got.Arguments, "%s: a check gate never rewrites arguments", c.Name)
}
