package abi

// MaxArgumentsBytes is the largest canonical argument object of a governed
// call: the one limit on a tool's input, whichever front end brings it
// (hook, HTTP, MCP). The controller denies a larger call before any gate
// runs (reason "request.too_large"), so a gate never fails on an input
// the front end accepted: the built-in gates are tested to evaluate an
// input of exactly this size within the host's default memory limit.
const MaxArgumentsBytes = 1 << 20
