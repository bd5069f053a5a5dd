// Package gatetest owns the gate test runner: Run evaluates every case of a
// cases file (the format is package sdk/gatecases's) through a gate module
// loaded by the host and reports pass / fail per case with a field-by-field
// diff. `govhost test` is its command-line front end; the built-in gates'
// tables (plugins/<name>/testdata/cases.json) and the examples' shared cases
// use the same format and the same runner. Check is `govhost plugin
// check`: load a module, report its ABI, exports and digest, and evaluate
// the smoke inputs (SmokeInputs), every failure a verdict in the report.
//
// Case files are trusted input written by the gate's author; the verdicts
// they are compared with come from the guest and are not: report text
// quotes every guest-produced string.
package gatetest
