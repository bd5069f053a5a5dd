// Package storetest is the conformance suite every policy.Store backend runs
// unchanged: put idempotence and conflicts, activation and its checks,
// bindings, resolution precedence, history, concurrency, and — for durable
// backends that can rewrite stored bytes — tamper detection.
package storetest
