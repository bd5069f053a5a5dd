package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/govhost/govhost/host/internal/interrupt"
)

// instrumentCache keeps instrumented modules on disk, next to wazero's
// compilation cache, so that a restart does not rewrite a module it has
// rewritten before (the pass runs at tens of MB/s; a Go-built gate is
// 3.5 MB, and wazero's cache can only hit once the rewrite is done).
//
// An entry is named by instrumentCache.key: the original module's digest, the
// pass's Options and interrupt.Fingerprint (the pass's own source), so a
// changed rewrite, limit or memory cap never finds an old entry. An entry
// records the CRC-32C of its contents; one that does not match (torn,
// truncated, corrupt) or names another key is ignored and written again.
// The checksum guards against accidents, not against someone who can write
// the cache directory: such a someone can already replace wazero's
// compiled machine code next to it, which wazero checks with the same
// CRC-32C. (Format v1 kept a sha256 instead: ~0.5–1 ms of CPU at every
// start for the three modules of a policy, for no more protection. Its
// entries are named under v1's magic, so v2 never reads them.)
type instrumentCache struct {
	dir         string // "" when the host has no compilation cache directory
	fingerprint string // interrupt.Fingerprint(); tests vary it
}

const (
	instrumentCacheSubdir = "govhost-instrumented"
	instrumentMagic       = "govhost instrumented module v2\n"
)

// instrumentChecksum is an entry's checksum: CRC-32C (Castagnoli), which
// the CPU computes in hardware.
var instrumentChecksum = crc32.MakeTable(crc32.Castagnoli)

const instrumentChecksumSize = 4

// instrumentEntry is an entry's metadata: what the host needs of an
// interrupt.Result besides the bytes.
type instrumentEntry struct {
	Key            string   `json:"key"`
	Module         string   `json:"module"` // sha256 of the original bytes
	MemoryMinPages uint64   `json:"memory_min_pages"`
	TableEntries   uint64   `json:"table_entries"`
	HasStart       bool     `json:"has_start"`
	MutableGlobals []uint32 `json:"mutable_globals"`
	Resettable     bool     `json:"resettable"`
	DataBytes      uint64   `json:"data_bytes"`
	CodeBytes      uint64   `json:"code_bytes"`
}

func newInstrumentCache(cacheDir string) instrumentCache {
	if cacheDir == "" {
		return instrumentCache{}
	}
	return instrumentCache{dir: filepath.Join(cacheDir, instrumentCacheSubdir), fingerprint: interrupt.Fingerprint()}
}

// key names the rewrite of the module with digest under opts by the build
// of the pass c.fingerprint names.
func (c instrumentCache) key(digest string, opts interrupt.Options) string {
	o, err := json.Marshal(opts)
	if err != nil {
		panic("host: interrupt options do not marshal: " + err.Error())
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(instrumentMagic), []byte(digest), o, []byte(c.fingerprint)} {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(part))))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// instrument returns the rewrite of wasm (whose sha256 is digest) under
// opts: from the cache when a sound entry is there, else from the pass,
// storing the result. Refusals are never cached. verify, when not nil,
// runs before the pass (on a cache hit wasm is never read): its error is
// returned as it is, and nothing is cached.
func (c instrumentCache) instrument(wasm []byte, digest string, opts interrupt.Options, verify func() error) (*interrupt.Result, error) {
	if c.dir != "" {
		if res := c.get(c.key(digest, opts), digest); res != nil {
			return res, nil
		}
	}
	if verify != nil {
		if err := verify(); err != nil {
			return nil, err
		}
	}
	if c.dir == "" {
		return interrupt.Instrument(wasm, opts)
	}
	key := c.key(digest, opts)
	res, err := interrupt.Instrument(wasm, opts)
	if err != nil {
		return nil, err
	}
	c.put(key, digest, res) // best effort: a failed write costs the next start a rewrite
	return res, nil
}

func (c instrumentCache) path(key string) string { return filepath.Join(c.dir, key) }

// get reads the entry for key and returns it only when its checksum
// matches its contents and it was made for key and module; nil otherwise.
func (c instrumentCache) get(key, module string) *interrupt.Result {
	b, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil
	}
	rest, ok := bytes.CutPrefix(b, []byte(instrumentMagic))
	if !ok || len(rest) < instrumentChecksumSize+4 {
		return nil
	}
	sum, body := rest[:instrumentChecksumSize], rest[instrumentChecksumSize:]
	if crc32.Checksum(body, instrumentChecksum) != binary.LittleEndian.Uint32(sum) {
		return nil
	}
	n := binary.LittleEndian.Uint32(body)
	if uint64(n) > uint64(len(body)-4) {
		return nil
	}
	var e instrumentEntry
	if err := json.Unmarshal(body[4:4+n], &e); err != nil || e.Key != key || e.Module != module {
		return nil
	}
	return &interrupt.Result{
		Wasm:           body[4+n:],
		MemoryMinPages: e.MemoryMinPages,
		TableEntries:   e.TableEntries,
		HasStart:       e.HasStart,
		MutableGlobals: e.MutableGlobals,
		Resettable:     e.Resettable,
		DataBytes:      e.DataBytes,
		CodeBytes:      e.CodeBytes,
	}
}

// put writes the entry for key atomically: a temporary file in the same
// directory, renamed over the entry. (No fsync: an entry torn by a crash
// fails its checksum and is rewritten.)
func (c instrumentCache) put(key, module string, res *interrupt.Result) {
	meta, err := json.Marshal(instrumentEntry{
		Key: key, Module: module,
		MemoryMinPages: res.MemoryMinPages, TableEntries: res.TableEntries,
		HasStart: res.HasStart, MutableGlobals: res.MutableGlobals, Resettable: res.Resettable,
		DataBytes: res.DataBytes, CodeBytes: res.CodeBytes,
	})
	if err != nil {
		return
	}
	// NB: the body is checksummed and written in parts, never
	// concatenated: a module's bytes are not copied once more for the cache.
	head := binary.LittleEndian.AppendUint32(nil, uint32(len(meta)))
	head = append(head, meta...)
	crc := crc32.Update(crc32.Update(0, instrumentChecksum, head), instrumentChecksum, res.Wasm)
	sum := binary.LittleEndian.AppendUint32(nil, crc)
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	f, err := os.CreateTemp(c.dir, key+".tmp-*")
	if err != nil {
		return
	}
	_, werr := f.Write([]byte(instrumentMagic))
	if werr == nil {
		_, werr = f.Write(sum)
	}
	if werr == nil {
		_, werr = f.Write(head)
	}
	if werr == nil {
		_, werr = f.Write(res.Wasm)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), c.path(key))
	}
	if werr != nil {
		_ = os.Remove(f.Name())
	}
}
