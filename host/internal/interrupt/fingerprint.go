package interrupt

import (
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"runtime"
	"sort"
	"sync"
)

// source is this package's own Go source: the rewrite is a function of it
// (and of the standard library it calls), so a digest of it names the
// rewrite exactly. Tests are included: a spurious change only costs a
// cache miss, a missed one would serve a stale rewrite.
//
//go:embed *.go
var source embed.FS

// Fingerprint identifies this build of the instrumentation pass: the
// sha256 of the package's source files (name and content, in name order)
// and of the Go release that compiled them. Instrument's output for given
// bytes and Options depends on nothing else, so a cache keyed by the input,
// the Options and Fingerprint never returns another build's rewrite.
func Fingerprint() string { return fingerprint() }

var fingerprint = sync.OnceValue(func() string {
	names, err := fs.Glob(source, "*.go")
	if err != nil || len(names) == 0 {
		panic("interrupt: embedded source missing")
	}
	sort.Strings(names)
	h := sha256.New()
	h.Write([]byte(runtime.Version()))
	h.Write([]byte{0})
	for _, name := range names {
		b, err := source.ReadFile(name)
		if err != nil {
			panic("interrupt: embedded source unreadable: " + err.Error())
		}
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
})
