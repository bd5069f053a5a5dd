package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/server"
)

// verdictSeries counts the govhost_gate_verdicts_total series.
func verdictSeries(t *testing.T, m *server.Metrics) (n int, labels map[string]bool) {
	t.Helper()
	families, err := m.Registry.Gather()
	require.NoError(t, err)
	labels = map[string]bool{}
	for _, f := range families {
		if f.GetName() != "govhost_gate_verdicts_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			n++
			for _, l := range s.GetLabel() {
				if l.GetName() == "reason_code" {
					labels[l.GetValue()] = true
				}
			}
		}
	}
	return n, labels
}

// TestMetrics_ReasonCodeSeriesAreBounded: a spy gate answering x.<hex of
// its input> 300 times (issue 28: 300 new /metrics series) adds one series,
// "undeclared"; even host-written codes stop at MaxReasonCodeLabels.
func TestMetrics_ReasonCodeSeriesAreBounded(t *testing.T) {
	m := server.NewMetrics()
	for i := 0; i < 300; i++ {
		m.GateEvaluated("spy", abi.DecisionAllow, fmt.Sprintf("x.%x", i*7919), time.Microsecond, false)
	}
	n, labels := verdictSeries(t, m)
	require.Equal(t, 1, n)
	require.True(t, labels["undeclared"])

	for i := 0; i < server.MaxReasonCodeLabels+50; i++ {
		m.GateEvaluated("spy", abi.DecisionDeny, fmt.Sprintf("gate.f%d", i), time.Microsecond, true)
	}
	n, labels = verdictSeries(t, m)
	require.Equal(t, 1+server.MaxReasonCodeLabels+1, n, "the cap, then one series for the rest")
	require.True(t, labels["other"])
}
