// Package assdk makes the AssemblyScript SDK's source available to Go code:
// `govhost gate new --lang assemblyscript` copies it into the projects it
// scaffolds. The SDK itself is assembly/index.ts.
package assdk

import _ "embed"

// Source is assembly/index.ts.
//
//go:embed assembly/index.ts
var Source []byte

// AssemblyScriptVersion is the compiler version the SDK is built and tested
// with (package.json).
const AssemblyScriptVersion = "0.28.20"
