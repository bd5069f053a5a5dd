// Package policyfile reads the policy file people write and turns it into a
// staged governance.PolicySnapshot. It owns the file format and its errors;
// storing, activating and binding are package policy's.
//
// # Format
//
// A policy file is one JSON object (UTF-8):
//
//	{
//	  "policy_id": "6f1c3a52-2a7e-4c1e-9a56-0d7d0c4f8e01",
//	  "version": "2026.11.1",
//	  "gates": [
//	    {
//	      "gate_id": "security.destructive",
//	      "module": "destructive",
//	      "level": "hard",
//	      "order": 10,
//	      "tool_ids": ["bash"],
//	      "config": {"extra_patterns": ["shred"]}
//	    },
//	    {
//	      "gate_id": "user.redact",
//	      "module": "gates/redact.wasm",
//	      "adapter_id": "wasm",
//	      "level": "soft",
//	      "order": 20,
//	      "tool_ids": ["write_file"],
//	      "transform": true
//	    }
//	  ]
//	}
//
// policy_id, version and gates are required; so are each gate's gate_id,
// module, level (hard, soft or advisory), order (an integer >= 0) and
// tool_ids (a nonempty list of distinct, nonempty ids). adapter_id defaults
// to DefaultAdapter, config (any JSON value without fractions or exponents;
// canonical hashing has no floats) to {}, transform to false. Unknown keys
// are refused, so a misspelt key is an error, not a silently ignored
// setting. Gate ids and orders must be unique in the file.
//
// module is either a built-in gate name ("permission", "pathguard",
// "destructive") or the path of a .wasm file (any reference containing a
// slash or ending in ".wasm"; relative paths are relative to the policy
// file). The loader never reads modules itself: a Resolver maps each
// reference to the sha256 of the module's bytes, and FileResolver is the
// usual one (files from disk, built-in names from a caller's table). So
// the snapshot's digest pins the exact module bytes and configuration.
//
// # Why JSON and not YAML?
//
// A gate's config is hashed as canonical JSON, and the digest must be what
// the author wrote. JSON maps onto that one to one: no implicit typing
// (YAML 1.1 reads no, on, 0755 and 1e3 as a bool, an octal and a float),
// no anchors or multi-document streams, no second parser with its own
// number rules, and no new dependency. The price is no comments; put notes
// in a "description"-like key inside config if a gate accepts one, or next
// to the file.
//
// # Errors
//
// Every refusal is a *FieldError naming the field in the file
// ("gates[1].level") and matching ErrInvalidFile; a module the resolver
// cannot find also matches ErrModuleNotFound. Loading stores nothing.
package policyfile
