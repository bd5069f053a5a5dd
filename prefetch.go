package govhost

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/govhost/govhost/plugins/builtin"
)

// WarmBuiltinsFile, in the host's compilation cache directory (by default
// <Dir>/wasm-cache; none, no file), lists the built-in gate modules the
// gates of the last run that made any ran: one digest a line. Open starts
// loading them while the database opens; Close writes it.
//
// Why: opening Pebble waits on the disk (a few fsyncs: 5–15 ms of a start,
// most of it with the CPU idle), and loading a policy's built-in modules
// from the compilation cache is CPU work (~25 ms on two cores for the three
// of the default policy) that came only after it: the database holds the
// policies, so what to load is known only once it is open. The list is last
// run's answer, known at once. A module listed but not needed costs its load
// (CPU, and its compiled code, held like any idle module within
// IdleModuleBytes); a module needed but not listed loads when asked, as
// before. Only built-in modules are ever loaded from it (their bytes are in
// the binary; other lines are ignored), so the file can make Open do no more
// than load the program's own modules.
const WarmBuiltinsFile = "govhost-warm-builtins"

// prefetch is the loads Open started from WarmBuiltinsFile.
type prefetch struct {
	path   string
	listed []string // digests read from the file, sorted
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startPrefetch reads the warm list at path and starts loading the built-in
// modules it names through g, each in its own goroutine. It never fails:
// a missing or unreadable list loads nothing.
func startPrefetch(g *Gates, path string) *prefetch {
	p := &prefetch{path: path}
	raw, err := os.ReadFile(path)
	if err != nil {
		return p
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if _, ok := builtin.ByDigest(line); ok && !slices.Contains(p.listed, line) {
			p.listed = append(p.listed, line)
		}
	}
	slices.Sort(p.listed)
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	for _, digest := range p.listed {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			// NB: not pinned: the gate that needs it pins it; until then it
			// is an idle module like any other. An error (the engine
			// closing) leaves the load to whoever asks next.
			_, _ = g.module(ctx, digest, false)
		}()
	}
	return p
}

// stop cancels the loads still waiting to start and waits for the others:
// the host closes after them.
func (p *prefetch) stop() {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
}

// save writes the built-in modules whose gates were made (made, sorted)
// as the next run's list, when some were and they differ from the list
// read at Open: a run that made no gate (a short command) leaves the list
// as it was. The write is a temporary file renamed into place, not synced:
// the list is a hint, and a torn or lost one loads less, never something
// else.
func (p *prefetch) save(made []string) error {
	if len(made) == 0 || slices.Equal(made, p.listed) {
		return nil
	}
	var b bytes.Buffer
	for _, d := range made {
		b.WriteString(d)
		b.WriteByte('\n')
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.path), ".warm-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p.path)
}
