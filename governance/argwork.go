package governance

import "sync/atomic"

// ArgumentWork counts, while it is installed (CountArgumentWork), every
// decode of a call's arguments (DecodeArguments, and so ParseArguments)
// and every canonicalisation and hash of them (NewArguments) in this
// process. It exists so a test can hold every edge to "each request is
// parsed once" (DESIGN.md, "Speed, by design"): an HTTP authorize and a
// hook's pre-tool event each decode their arguments once and canonicalise
// and hash them once. A transform gate's rewrite is a new version of the
// arguments and counts as one more canonicalisation. Safe for concurrent
// use.
type ArgumentWork struct {
	decodes, canonicalisations atomic.Int64
}

// NB: one pointer load on every decode and canonicalisation while no
// counter is installed, which is always outside such tests.
var argumentWork atomic.Pointer[ArgumentWork]

// CountArgumentWork installs a fresh counter for the whole process and
// returns it with the function that removes it. Counters do not nest: the
// last installed counts. Work done by any goroutine while it is installed
// is counted, so a test that counts must not run beside other tests that
// parse arguments (no t.Parallel).
func CountArgumentWork() (*ArgumentWork, func()) {
	w := &ArgumentWork{}
	argumentWork.Store(w)
	return w, func() { argumentWork.CompareAndSwap(w, nil) }
}

// Counts returns the decodes and canonicalisations counted so far.
func (w *ArgumentWork) Counts() (decodes, canonicalisations int64) {
	return w.decodes.Load(), w.canonicalisations.Load()
}

func countDecode() {
	if w := argumentWork.Load(); w != nil {
		w.decodes.Add(1)
	}
}

func countCanonicalisation() {
	if w := argumentWork.Load(); w != nil {
		w.canonicalisations.Add(1)
	}
}
