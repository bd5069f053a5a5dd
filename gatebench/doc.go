// Package gatebench owns gate benchmarking for gate authors (`govhost
// bench`): per-call latency of a warm gate (min / median / p99), cold load
// with and without the compilation cache, the memory of one instance, and
// the comparison of several modules on the same inputs in one run. Figures
// are wall-clock times on whatever else the machine is doing: compare
// modules measured in the same run, not runs on different days.
package gatebench
