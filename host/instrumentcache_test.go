package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host/internal/interrupt"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

func fixtureDigest(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return hex.EncodeToString(sum[:])
}

func testInstrumentCache(t *testing.T, dir, fingerprint string) instrumentCache {
	t.Helper()
	c := newInstrumentCache(dir)
	require.NotEmpty(t, c.fingerprint)
	c.fingerprint = fingerprint
	return c
}

// entries lists the cache's files; a temporary file left behind would show.
func entries(t *testing.T, c instrumentCache) []string {
	t.Helper()
	des, err := os.ReadDir(c.dir)
	require.NoError(t, err)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestInstrumentCache_MissThenHit(t *testing.T) {
	opts := NewConfig().mustResolve(t).interruptOptions()
	allow, loop := wasmfixtures.Bytes("allow.wasm"), wasmfixtures.Bytes("loop.wasm")
	c := testInstrumentCache(t, t.TempDir(), "fp1")
	key := c.key(fixtureDigest(allow), opts)
	require.Nil(t, c.get(key, fixtureDigest(allow)), "empty cache")

	want, err := interrupt.Instrument(allow, opts)
	require.NoError(t, err)
	got, err := c.instrument(allow, fixtureDigest(allow), opts, nil)
	require.NoError(t, err)
	require.Equal(t, want, got, "a miss returns the pass's result")
	require.Equal(t, []string{key}, entries(t, c), "one entry, no temporary file left")
	require.Equal(t, want, c.get(key, fixtureDigest(allow)), "the entry reads back whole")

	// The next instrument is served from the entry, not by the pass: an
	// entry holding another rewrite under allow's key is what comes back.
	other, err := interrupt.Instrument(loop, opts)
	require.NoError(t, err)
	c.put(key, fixtureDigest(allow), other)
	got, err = c.instrument(allow, fixtureDigest(allow), opts, nil)
	require.NoError(t, err)
	require.Equal(t, other.Wasm, got.Wasm, "hit")
}

func TestInstrumentCache_NoDirNoFiles(t *testing.T) {
	c := newInstrumentCache("")
	allow := wasmfixtures.Bytes("allow.wasm")
	res, err := c.instrument(allow, fixtureDigest(allow), NewConfig().mustResolve(t).interruptOptions(), nil)
	require.NoError(t, err)
	require.NotEmpty(t, res.Wasm)
}

func TestInstrumentCache_KeyedByFingerprintOptionsAndModule(t *testing.T) {
	dir := t.TempDir()
	opts := NewConfig().mustResolve(t).interruptOptions()
	allow := wasmfixtures.Bytes("allow.wasm")
	d := fixtureDigest(allow)
	c1, c2 := testInstrumentCache(t, dir, "fp1"), testInstrumentCache(t, dir, "fp2")
	_, err := c1.instrument(allow, d, opts, nil)
	require.NoError(t, err)
	require.NotNil(t, c1.get(c1.key(d, opts), d))

	require.NotEqual(t, c1.key(d, opts), c2.key(d, opts))
	require.Nil(t, c2.get(c2.key(d, opts), d), "another build of the pass misses")
	smaller := opts
	smaller.MemoryCapBytes /= 2
	require.NotEqual(t, c1.key(d, opts), c1.key(d, smaller), "options are in the key")
	deeper := opts
	deeper.Limits.CallDepth++
	require.NotEqual(t, c1.key(d, opts), c1.key(d, deeper), "limits are in the key")
	require.Nil(t, c1.get(c1.key(d, opts), fixtureDigest(wasmfixtures.Bytes("loop.wasm"))), "an entry names its module")

	_, err = c2.instrument(allow, d, opts, nil)
	require.NoError(t, err)
	require.Len(t, entries(t, c1), 2, "the other build wrote its own entry")
}

func TestInstrumentCache_CorruptEntryIgnoredAndRewritten(t *testing.T) {
	opts := NewConfig().mustResolve(t).interruptOptions()
	allow := wasmfixtures.Bytes("allow.wasm")
	d := fixtureDigest(allow)
	want, err := interrupt.Instrument(allow, opts)
	require.NoError(t, err)
	header := len(instrumentMagic) + instrumentChecksumSize
	corruptions := map[string]func([]byte) []byte{
		"empty":            func([]byte) []byte { return nil },
		"torn":             func(b []byte) []byte { return b[:len(b)/2] },
		"header only":      func(b []byte) []byte { return b[:header+2] },
		"wrong magic":      func(b []byte) []byte { b[0] ^= 1; return b },
		"checksum flipped": func(b []byte) []byte { b[len(instrumentMagic)] ^= 1; return b },
		"meta flipped":     func(b []byte) []byte { b[header+6] ^= 1; return b },
		"wasm flipped":     func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"length too big":   func(b []byte) []byte { b[header+3] = 0x7f; return b },
		"appended":         func(b []byte) []byte { return append(b, 0) },
		// Format v1 (an older build's): its magic, and a sha256 where v2
		// keeps a CRC-32C, over the same body.
		"format v1": func(b []byte) []byte {
			body := b[header:]
			sum := sha256.Sum256(body)
			v1 := append([]byte("govhost instrumented module v1\n"), sum[:]...)
			return append(v1, body...)
		},
	}
	for name, corrupt := range corruptions {
		t.Run(name, func(t *testing.T) {
			c := testInstrumentCache(t, t.TempDir(), "fp")
			key := c.key(d, opts)
			c.put(key, d, want)
			b, err := os.ReadFile(c.path(key))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(c.path(key), corrupt(b), 0o600))
			require.Nil(t, c.get(key, d), "a corrupt entry is not trusted")
			got, err := c.instrument(allow, d, opts, nil)
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Equal(t, want, c.get(key, d), "rewritten")
		})
	}
}

// TestHost_CorruptInstrumentEntry_StillInstrumented: an entry that holds
// the module's uninstrumented bytes (and a stale digest) is ignored; the
// loop is rewritten again and its call still ends at the deadline.
func TestHost_CorruptInstrumentEntry_StillInstrumented(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := NewConfig().WithCompilationCacheDir(dir).WithCallTimeout(300 * time.Millisecond)
	loop := wasmfixtures.Bytes("loop.wasm")
	d := fixtureDigest(loop)
	c := newInstrumentCache(dir)
	key := c.key(d, cfg.mustResolve(t).interruptOptions())
	res, err := interrupt.Instrument(loop, cfg.mustResolve(t).interruptOptions())
	require.NoError(t, err)
	c.put(key, d, res)
	b, err := os.ReadFile(c.path(key))
	require.NoError(t, err)
	b = append(b[:len(b)-len(res.Wasm)], loop...) // the original, unbounded loop; digest left as it was
	require.NoError(t, os.WriteFile(c.path(key), b, 0o600))

	h, err := New(ctx, cfg)
	require.NoError(t, err)
	defer h.Close(ctx)
	m, err := h.Load(ctx, loop, d)
	require.NoError(t, err)
	g, err := h.Gate(ctx, m, nil)
	require.NoError(t, err)
	start := time.Now()
	out, err := g.Evaluate(ctx, abi.GateInput{GateID: "test", Phase: abi.PhaseCheck, Tool: "x", Arguments: []byte(`{}`)})
	var ge *GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, CodeTimeout, ge.Code)
	require.Equal(t, CodeTimeout, out.ReasonCode)
	t.Logf("interrupted after %v", time.Since(start))
	require.NotNil(t, c.get(key, d), "the entry was written again, sound")
	_, err = os.Stat(filepath.Join(dir, instrumentCacheSubdir))
	require.NoError(t, err)
}

func (c Config) mustResolve(t *testing.T) Config {
	t.Helper()
	r, err := c.resolved()
	require.NoError(t, err)
	return r
}
