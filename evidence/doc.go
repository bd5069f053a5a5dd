// Package evidence owns the evidence store contract of ADR-0087 D3: the
// Store interface every backend implements (append-only: no update, no
// delete), the chain verifier with its exact failure codes, the
// compare-and-append rules every backend applies, and MemStore, the
// in-memory reference backend.
//
// Durable backends live in subpackages (pebblestore) and must pass the
// conformance suite in evidence/storetest unchanged.
package evidence
