package builtin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/plugins/builtin"
)

// TestSHA256SUMS_NameTheEmbeddedModules is what keeps the build-time
// digests honest: each built-in's Digest (read from SHA256SUMS, never
// computed at start) is the sha256 of the bytes the binary embeds, and
// SHA256SUMS names the four modules and nothing else. A module rebuilt
// without `make plugins` (which writes both) fails here.
func TestSHA256SUMS_NameTheEmbeddedModules(t *testing.T) {
	for _, name := range builtin.Names() {
		m, ok := builtin.Lookup(name)
		require.True(t, ok)
		sum := sha256.Sum256(m.Wasm)
		require.Equal(t, hex.EncodeToString(sum[:]), m.Digest, "%s.wasm does not hash to its SHA256SUMS line: run make plugins", name)
		onDisk, err := os.ReadFile(name + ".wasm")
		require.NoError(t, err)
		require.Equal(t, onDisk, m.Wasm, "%s: the embedded bytes are the committed file", name)
	}
	sums, err := os.ReadFile(filepath.Join(".", "SHA256SUMS"))
	require.NoError(t, err)
	var files []string
	for _, line := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		_, file, ok := strings.Cut(line, "  ")
		require.True(t, ok, "sha256sum's format: %q", line)
		files = append(files, file)
	}
	require.Equal(t, []string{"destructive.wasm", "duties.wasm", "pathguard.wasm", "permission.wasm"}, files)
}
