//go:build !unix

package govhost_test

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }

// processFaults is not measured here.
func processFaults() int64 { return 0 }
