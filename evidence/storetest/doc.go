// Package storetest is the conformance suite every evidence.Store backend
// runs unchanged: the compare-and-append rules, the verifier's failure codes
// over stored (and tampered) chains, and concurrent appends.
package storetest
