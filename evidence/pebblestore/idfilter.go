package pebblestore

import (
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"
)

// idFilter answers "is this record id certainly not in the store?" from
// memory, so that an append's duplicate-id check (ADR-0087 D3: a record id
// the store holds is a conflict, store-wide) skips Pebble for the ids it
// has never seen, which is nearly every id. A "maybe" is settled by the
// exact lookup in the id index, as before; the filter never decides a
// conflict.
//
// Why: the lookups were a fifth of a durable call's CPU (docs/performance.md,
// s8-pebble), mostly seeks in Pebble's memtable skiplist, which no bloom
// filter of Pebble's spares (its filters are per sstable).
//
// It is a bloom filter in generations: ids are added to the newest, which
// is replaced by one twice its size when full, and a lookup asks every
// generation. It holds every id of the store once load (the scan of the
// id index started by the store's first append) has finished, and every id appended
// since the filter was made, which is before the store's first append: so
// "absent" is exact once loaded. Until then, and once the store holds more
// ids than maxFilteredIDs (the filter then frees its memory and stays
// off), every id is looked up in Pebble.
//
// Memory: 1.5 bytes an id (12 bits), and at most twice that while the
// newest generation fills.
type idFilter struct {
	seed   maphash.Seed
	loaded atomic.Bool // the scan of the stored ids has finished
	gens   atomic.Pointer[[]*bloomGen]
	mu     sync.Mutex // serializes growth and switching off
	count  atomic.Int64
	off    atomic.Bool
}

// maxFilteredIDs bounds the filter's memory: a store holding more ids than
// this checks every id in Pebble, as before the filter. The generations'
// capacities add up to at most twice the ids held, at 1.5 bytes an id:
// 1<<25 ids (~5.6 million governed calls of six records) is at most
// ~96 MiB of filter.
var maxFilteredIDs int64 = 1 << 25 // a var for tests

// firstGenIDs is the capacity of the first generation (~100 KiB).
const firstGenIDs = 1 << 16

func newIDFilter() *idFilter {
	f := &idFilter{seed: maphash.MakeSeed()}
	gens := []*bloomGen{newBloomGen(firstGenIDs)}
	f.gens.Store(&gens)
	return f
}

// bloomGen is one generation: a blocked bloom filter (every id's bits lie
// in one 64-byte block, one cache line) sized for capacity ids at 12 bits
// an id, 8 bits set an id: under 1 % false positives when full.
type bloomGen struct {
	words    []atomic.Uint64
	blocks   uint64 // at most 2^32
	capacity int64
	n        atomic.Int64
}

const (
	bitsPerID     = 12
	wordsPerBlock = 8 // 512 bits
	probesPerID   = 8
)

func newBloomGen(capacity int64) *bloomGen {
	blocks := (uint64(capacity)*bitsPerID + wordsPerBlock*64 - 1) / (wordsPerBlock * 64)
	return &bloomGen{words: make([]atomic.Uint64, blocks*wordsPerBlock), blocks: blocks, capacity: capacity}
}

// block is the id's block: picked by the low half of its hash, scaled to
// the block count (a multiply and a shift, no division).
func (g *bloomGen) block(h uint64) []atomic.Uint64 {
	b := (uint64(uint32(h)) * g.blocks >> 32) * wordsPerBlock
	return g.words[b : b+wordsPerBlock]
}

// bits are the double hashing of an id's bit positions within its block,
// from the hash's high half and a remix of the whole (the low half picks
// the block).
func bits(h uint64) (h1, h2 uint32) {
	return uint32(h >> 32), uint32((h*0x9e3779b97f4a7c15)>>32) | 1
}

func (g *bloomGen) add(h uint64) {
	blk := g.block(h)
	h1, h2 := bits(h)
	for i := range uint32(probesPerID) {
		bit := (h1 + i*h2) & 511
		blk[bit>>6].Or(1 << (bit & 63))
	}
}

func (g *bloomGen) mayContain(h uint64) bool {
	blk := g.block(h)
	h1, h2 := bits(h)
	for i := range uint32(probesPerID) {
		bit := (h1 + i*h2) & 511
		if blk[bit>>6].Load()&(1<<(bit&63)) == 0 {
			return false
		}
	}
	return true
}

func (f *idFilter) hash(id uuid.UUID) uint64 { return maphash.Bytes(f.seed, id[:]) }

// add records an id the store now holds (or may hold: a failed append's
// id is only a false positive).
func (f *idFilter) add(id uuid.UUID) {
	if f.off.Load() {
		return
	}
	h := f.hash(id)
	gens := *f.gens.Load()
	g := gens[len(gens)-1]
	if g.n.Add(1) > g.capacity {
		g = f.grow(g)
		if g == nil {
			return
		}
		g.n.Add(1)
	}
	g.add(h)
	f.count.Add(1)
}

// grow replaces full as the newest generation by one twice its size (or
// returns the newest one if another add already did), or switches the
// filter off past maxFilteredIDs and returns nil.
func (f *idFilter) grow(full *bloomGen) *bloomGen {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off.Load() {
		return nil
	}
	gens := *f.gens.Load()
	if last := gens[len(gens)-1]; last != full {
		return last
	}
	if f.count.Load() >= maxFilteredIDs {
		f.switchOffLocked()
		return nil
	}
	next := append(gens[:len(gens):len(gens)], newBloomGen(full.capacity*2))
	f.gens.Store(&next)
	return next[len(next)-1]
}

func (f *idFilter) switchOffLocked() {
	f.off.Store(true)
	empty := []*bloomGen{}
	f.gens.Store(&empty) // the memory goes with the last reader
}

// absent reports whether id is certainly not stored. It is false until the
// filter has loaded the stored ids, and once it is switched off.
func (f *idFilter) absent(id uuid.UUID) bool {
	if !f.loaded.Load() || f.off.Load() {
		return false
	}
	h := f.hash(id)
	for _, g := range *f.gens.Load() {
		if g.mayContain(h) {
			return false
		}
	}
	return !f.off.Load() // NB: switched off meanwhile, gens may have been emptied
}

// load adds every id of the store's id index, then marks the filter
// loaded. It stops early, leaving the filter unloaded (every id then goes
// to Pebble), when stop is closed or the index cannot be read.
func (f *idFilter) load(db *pebble.DB, stop <-chan struct{}) (err error) {
	defer func() {
		// A DB lent to New and closed by its owner without the Store's
		// Close first: Pebble panics on a closed DB. The filter stays
		// unloaded; the store is not usable on that DB anyway.
		if p := recover(); p != nil {
			err = fmt.Errorf("%w (%v)", errLoadStopped, p)
		}
	}()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: idLookupOptions.LowerBound, UpperBound: idLookupOptions.UpperBound})
	if err != nil {
		return err
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n++; n%4096 == 0 {
			select {
			case <-stop:
				return errors.Join(errLoadStopped, it.Close())
			default:
			}
		}
		k := it.Key()
		if len(k) != keyLenID {
			continue // not an id index key; the lookup still sees it
		}
		f.add(uuid.UUID(k[3:]))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	f.loaded.Store(true)
	return nil
}

var errLoadStopped = errors.New("pebblestore: id filter load stopped by Close")
