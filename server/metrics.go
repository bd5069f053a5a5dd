package server

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/service"
)

// Metrics are the server's Prometheus collectors, on their own registry.
// Labels never carry argument values: routes are patterns, gates are ids.
type Metrics struct {
	Registry *prometheus.Registry

	requests      *prometheus.CounterVec
	requestTime   *prometheus.HistogramVec
	verdicts      *prometheus.CounterVec
	gateTime      *prometheus.HistogramVec
	appendTime    prometheus.Histogram
	appendFailure prometheus.Counter

	// declared says whether a gate declared a reason code (Watch sets it);
	// reasonLabels are the reason_code label values in use, at most
	// MaxReasonCodeLabels.
	declared     func(code string) bool
	reasonLabels sync.Map
	reasonCount  atomic.Int64
}

// Reason-code labels: a gate's reason code becomes a label value only when
// some gate declared it (or the host or the controller wrote it: gate.*,
// approval.*, policy.*); any other is counted under "undeclared", and past
// MaxReasonCodeLabels distinct values under "other", so that no gate can
// grow the series without bound or write what it saw into them.
const (
	MaxReasonCodeLabels = 256
	undeclaredLabel     = "undeclared"
	otherLabel          = "other"
)

func (m *Metrics) reasonLabel(code string) string {
	hostWritten := strings.HasPrefix(code, "gate.") || strings.HasPrefix(code, "approval.") || strings.HasPrefix(code, "policy.")
	if !hostWritten && (m.declared == nil || !m.declared(code)) {
		return undeclaredLabel
	}
	if _, ok := m.reasonLabels.Load(code); ok {
		return code
	}
	if m.reasonCount.Add(1) > MaxReasonCodeLabels {
		m.reasonCount.Add(-1)
		return otherLabel
	}
	if _, loaded := m.reasonLabels.LoadOrStore(code, true); loaded {
		m.reasonCount.Add(-1)
	}
	return code
}

// NewMetrics registers the collectors. Call Watch once the service exists.
func NewMetrics() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "govhost_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
	}, []string{"route", "method", "status"})
	m.requestTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "govhost_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"route"})
	m.verdicts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "govhost_gate_verdicts_total", Help: "Gate answers by gate id, decision and reason code (failed: the gate itself failed).",
	}, []string{"gate", "decision", "reason_code", "failed"})
	m.gateTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "govhost_gate_duration_seconds", Help: "Gate evaluation latency by gate id.",
		Buckets: prometheus.ExponentialBuckets(0.000001, 2, 20),
	}, []string{"gate"})
	m.appendTime = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "govhost_evidence_append_duration_seconds", Help: "Durable evidence append latency (one batch).",
		Buckets: prometheus.ExponentialBuckets(0.00005, 2, 16),
	})
	m.appendFailure = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "govhost_evidence_append_failures_total", Help: "Evidence appends that failed (nothing was decided on them).",
	})
	m.Registry.MustRegister(m.requests, m.requestTime, m.verdicts, m.gateTime, m.appendTime, m.appendFailure,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Watch adds the gauges read from the service: open tasks, pending
// approvals, dropped projections, gate instance pools.
func (m *Metrics) Watch(s *service.Service) {
	m.declared = s.ReasonCodeDeclared
	m.Registry.MustRegister(newPoolCollector(s),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "govhost_open_tasks", Help: "Tasks open now."},
			func() float64 { return float64(s.OpenTaskCount()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "govhost_pending_approvals", Help: "Approvals waiting for a decision."},
			func() float64 { return float64(s.PendingApprovals()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "govhost_projections_dropped_total", Help: "Observations lost to slow subscribers."},
			func() float64 { return float64(s.DroppedObservations()) }),
	)
}

// GateEvaluated implements service.Observer.
func (m *Metrics) GateEvaluated(gateID string, decision abi.Decision, reasonCode string, took time.Duration, failed bool) {
	m.verdicts.WithLabelValues(gateID, string(decision), m.reasonLabel(reasonCode), strconv.FormatBool(failed)).Inc()
	m.gateTime.WithLabelValues(gateID).Observe(took.Seconds())
}

// Appended implements service.Observer.
func (m *Metrics) Appended(_ int, took time.Duration, failed bool) {
	if failed {
		m.appendFailure.Inc()
		return
	}
	m.appendTime.Observe(took.Seconds())
}

func (m *Metrics) request(route, method string, status int, took time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.requestTime.WithLabelValues(route).Observe(took.Seconds())
}

// poolCollector reports each gate's instance pool, read at scrape time.
type poolCollector struct {
	svc              *service.Service
	live, idle, size *prometheus.Desc
}

func newPoolCollector(s *service.Service) *poolCollector {
	gate := []string{"gate"}
	return &poolCollector{
		svc:  s,
		live: prometheus.NewDesc("govhost_gate_pool_instances", "Instances of a gate that exist now (idle, serving a call, or being created), by gate id.", gate, nil),
		idle: prometheus.NewDesc("govhost_gate_pool_idle_instances", "Instances of a gate idle in its pool, by gate id.", gate, nil),
		size: prometheus.NewDesc("govhost_gate_pool_size", "The most instances a gate's pool may hold, by gate id.", gate, nil),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.live
	ch <- c.idle
	ch <- c.size
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.svc.GatePools() {
		ch <- prometheus.MustNewConstMetric(c.live, prometheus.GaugeValue, float64(p.Live), p.GateID)
		ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(p.Idle), p.GateID)
		ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(p.Size), p.GateID)
	}
}
