//go:build !unix

package controller_test

import "time"

// processCPU is not measured on this platform: cpu-µs/op reads 0.
func processCPU() time.Duration { return 0 }

// processFaults is not measured on this platform: minflt/op reads 0.
func processFaults() int64 { return 0 }
