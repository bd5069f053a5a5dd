package permission_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/govhost/govhost/plugins/permission"
)

var updateConfigErrors = flag.Bool("update-config-errors", false, "rewrite testdata/config_errors.json's error texts from this package")

// configErrorTable is testdata/config_errors.json: refused configurations
// and their exact error texts, which the Rust module must give too
// (`make plugins-test`).
type configErrorTable struct {
	Description string `json:"description"`
	Cases       []struct {
		Name   string `json:"name"`
		Config string `json:"config"`
		Error  string `json:"error"`
	} `json:"cases"`
}

// TestConfigErrorTable: every row is refused with exactly its error text.
func TestConfigErrorTable(t *testing.T) {
	const file = "testdata/config_errors.json"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var table configErrorTable
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	for i, c := range table.Cases {
		_, err := permission.New([]byte(c.Config))
		if err == nil {
			t.Fatalf("%s: %s accepted", c.Name, c.Config)
		}
		if *updateConfigErrors {
			table.Cases[i].Error = err.Error()
			continue
		}
		if err.Error() != c.Error {
			t.Errorf("%s: got %q, want %q", c.Name, err.Error(), c.Error)
		}
	}
	if *updateConfigErrors {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", " ")
		if err := enc.Encode(table); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
