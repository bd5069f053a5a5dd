// Package csdk makes the C SDK's header available to Go code: `govhost gate
// new --lang c` copies it into the projects it scaffolds. The SDK itself is
// govhost_gate.h.
package csdk

import _ "embed"

// Header is govhost_gate.h.
//
//go:embed govhost_gate.h
var Header []byte
