// Package certify owns what a task certificate claims and how that claim
// is checked: one set of checks (Check) that the controller runs before it
// mints and that an offline verifier runs on a bundle (certificate, chain,
// policy snapshot, signed checkpoint) without the data directory. It also
// owns the bundle's file layout.
//
// The claim is ADR-0087 D6's, made checkable: the declared checks ran under
// a retrievable policy and the chain verifies to the certificate's head. So
// beyond chain verification and one terminal per started operation, every
// record of the task pins the task's exact policy version and digest,
// every binding of the snapshot that applies to an operation's tool has its
// GATE_EVALUATED before a callable terminal, and no callable terminal
// follows a denial. A certificate still says nothing about the tools'
// results, and is not a signature: authenticity comes from a signed
// checkpoint (package checkpoint) and a key the verifier trusts.
package certify
