// Package checkpoint owns signed checkpoints of evidence chain heads: the
// trusted head ADR-0087 D2 says must live outside the mutable chain. A
// checkpoint is a C2SP signed note (golang.org/x/mod/sumdb/note, Ed25519)
// whose text is three lines — origin, size, head:
//
//	govhost/chain/<chain_id>
//	<number of records>
//	<chain hash of the last record, 64 lowercase hex>
//
// The shape follows C2SP tlog-checkpoint, but the third line is the head
// of a linear hash chain, not an RFC 6962 Merkle root: a tlog verifier
// must not read it as one. The package also owns the data directory's
// signing keys (Keyring: created on first use, private key 0600, rotation
// keeps old public keys), the operator's external checkpoint log (a file
// of concatenated notes, or a directory of one file per checkpoint), and
// the witness side of C2SP tlog-witness: cosignature/v1 keys and
// cosignatures (cosignature.go) and a witness that cosigns only
// checkpoints extending what it cosigned before (witness.go; the
// consistency proof of a hash chain is checked by a caller-supplied
// function, certify.Consistency, since this package knows no records).
// Every note is read as a C2SP signed note, strictly, with or without a
// key. The formats: docs/evidence-format.md.
package checkpoint
