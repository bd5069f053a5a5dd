//go:build unix

package govhost_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used: a
// figure that, unlike wall time, a loaded machine inflates little.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processFaults is the minor page faults this process has taken: each is a
// fresh page touched, ~16 µs of kernel time on the benchmark VM, and a
// count the machine's load does not change.
func processFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Minflt
}
