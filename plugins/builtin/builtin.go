// Package builtin embeds the built-in gate modules — permission,
// pathguard, destructive and duties — as built by `make plugins`: the
// native-ABI Rust modules from plugins/rust/<name>.rs (destructive,
// pathguard, duties; docs/gates-builtin.md) and the Go one from
// plugins/<name>/wasm (permission). The bytes are committed; CI rebuilds
// them and fails on any difference, so the digests name exactly the code
// in this repository.
//
// The digests are computed at build time, not at start: `make plugins`
// writes SHA256SUMS (sha256sum's format) next to the modules, and it is
// embedded with them. Hashing 4 MB of modules at every start cost a
// process 5–20 ms and brought every embedded page into memory, though a
// warm start never reads a module's bytes (host.LoadTrusted finds their
// instrumented form by digest). A SHA256SUMS that does not name the
// embedded bytes cannot ship: TestSHA256SUMS_NameTheEmbeddedModules fails,
// and so does `make plugins-check` (it rebuilds both and diffs them).
package builtin

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"sort"
	"strings"
)

var (
	//go:embed permission.wasm
	permissionWasm []byte
	//go:embed pathguard.wasm
	pathguardWasm []byte
	//go:embed destructive.wasm
	destructiveWasm []byte
	//go:embed duties.wasm
	dutiesWasm []byte
	//go:embed SHA256SUMS
	sha256sums []byte
)

// Module is one embedded gate module.
type Module struct {
	Name string
	// Digest is the lowercase hex sha256 of Wasm (from SHA256SUMS).
	Digest string
	// Wasm is the module's bytes. Callers must not modify it.
	Wasm []byte
}

var modules = func() map[string]Module {
	digests, err := parseSums(sha256sums)
	if err != nil {
		panic(err)
	}
	m := map[string]Module{}
	for name, b := range map[string][]byte{
		"permission":  permissionWasm,
		"pathguard":   pathguardWasm,
		"destructive": destructiveWasm,
		"duties":      dutiesWasm,
	} {
		digest, ok := digests[name+".wasm"]
		if !ok {
			panic("plugins/builtin: SHA256SUMS names no digest for " + name + ".wasm (run make plugins)")
		}
		m[name] = Module{Name: name, Digest: digest, Wasm: b}
	}
	return m
}()

// parseSums reads sha256sum's output: per line a lowercase hex digest, two
// spaces (or a space and "*") and a file name.
func parseSums(b []byte) (map[string]string, error) {
	digests := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		digest, name, ok := strings.Cut(sc.Text(), " ")
		name = strings.TrimPrefix(strings.TrimPrefix(name, " "), "*")
		if !ok || !isHexDigest(digest) || name == "" {
			return nil, fmt.Errorf("plugins/builtin: SHA256SUMS line %d is not \"<sha256>  <file>\" (run make plugins)", line)
		}
		digests[name] = digest
	}
	return digests, sc.Err()
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Names lists the built-in gates, sorted.
func Names() []string {
	names := make([]string, 0, len(modules))
	for n := range modules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the built-in module with this name.
func Lookup(name string) (Module, bool) {
	m, ok := modules[name]
	return m, ok
}

// ByDigest returns the built-in module with this sha256, if any.
func ByDigest(digest string) (Module, bool) {
	for _, m := range modules {
		if m.Digest == digest {
			return m, true
		}
	}
	return Module{}, false
}
