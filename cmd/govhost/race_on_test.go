//go:build race

package main

// raceEnabled: the test binary (and so every serve child it starts) runs
// under the race detector, whose shadow memory multiplies a process's RSS.
const raceEnabled = true
