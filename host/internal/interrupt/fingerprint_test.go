package interrupt

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestFingerprint_CoversEverySourceFile: the embedded source is the
// package's whole source as it is on disk, so no change to the rewrite can
// leave the fingerprint (and a cache keyed by it) as it was.
func TestFingerprint_CoversEverySourceFile(t *testing.T) {
	onDisk, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := fs.Glob(source, "*.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) == 0 || len(onDisk) != len(embedded) {
		t.Fatalf("embedded %v, on disk %v", embedded, onDisk)
	}
	for i, name := range onDisk {
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := source.ReadFile(embedded[i])
		if err != nil || embedded[i] != name || string(got) != string(want) {
			t.Fatalf("embedded %s differs from %s on disk", embedded[i], name)
		}
	}
	fp := Fingerprint()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(fp) || Fingerprint() != fp {
		t.Fatalf("fingerprint %q: want a stable sha256 hex", fp)
	}
}
