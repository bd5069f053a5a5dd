package assdk

import (
	"encoding/json"
	"os"
	"testing"
)

// The version scaffolds pin is the one package.json (and its lock) pins.
func TestAssemblyScriptVersion_MatchesPackageJSON(t *testing.T) {
	raw, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if got := pkg.DevDependencies["assemblyscript"]; got != AssemblyScriptVersion {
		t.Fatalf("package.json pins assemblyscript %q, AssemblyScriptVersion is %q", got, AssemblyScriptVersion)
	}
}
