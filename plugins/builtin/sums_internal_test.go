package builtin

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSums(t *testing.T) {
	const d = "9716c7f5a7d16865dec63b3d3958747bc5540cbe839f5b06783f9a6a5d507b86"
	got, err := parseSums([]byte(d + "  a.wasm\n" + d + " *b.wasm\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a.wasm": d, "b.wasm": d}, got)
	for _, bad := range []string{
		d + "\n",                        // no file
		d[:63] + "  a.wasm\n",           // short digest
		"9716C7" + d[6:] + "  a.wasm\n", // upper case: sha256sum writes lower
		"  a.wasm\n",                    // no digest
		d + "  a.wasm\nnot a line\n",    // a bad second line
	} {
		_, err := parseSums([]byte(bad))
		require.ErrorContains(t, err, "SHA256SUMS line", "%q", bad)
	}
}
