// Package certify owns what a task certificate claims and how that claim
// is checked: one set of checks (Check) that the controller runs before it
// mints and that an offline verifier runs on a bundle (certificate, chain,
// policy snapshot, signed checkpoint) without the data directory. It also
// owns the bundle's file layout.
//
// The claim is ADR-0087 D6's, made checkable: the declared checks ran under
// a retrievable policy and the chain verifies to the certificate's head. So
// beyond chain verification and one terminal per started operation, every
// record of the task pins the task's exact (active) policy version and
// digest, and each operation's GATE_EVALUATED records replay the
// controller's gate sequence exactly: the bindings of the snapshot that
// apply to its tool, each once per phase, in snapshot order, on the
// arguments the previous gate passed on, ending at the first blocking deny,
// which the OPERATION_DENIED names (operations.go). Nothing an insider
// with write access to the store can add, drop, duplicate or reorder
// there leaves a chain that passes (forgetest builds the forgeries the
// tests try). A certificate still says nothing about the tools' results,
// and is not a signature: authenticity comes from a signed checkpoint
// (package checkpoint) and a key the verifier trusts, and protection
// against the key holder's own rewrite from witnesses' cosignatures
// (Consistency is the proof a witness checks). The formats and every rule:
// docs/evidence-format.md.
package certify
