// Package rustsdk makes the Rust SDK's sources available to Go code:
// `govhost gate new --lang rust` copies them into the projects it
// scaffolds. The SDK itself is the crate in src/.
package rustsdk

import _ "embed"

var (
	// Lib is src/lib.rs, the crate root.
	//
	//go:embed src/lib.rs
	Lib []byte
	// JSON is src/json.rs, its JSON module.
	//
	//go:embed src/json.rs
	JSON []byte
)
