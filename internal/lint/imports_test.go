package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/govhost/govhost"

// packageImports maps each package directory (relative to the module root)
// to the imports of its non-test Go files.
func packageImports(t *testing.T) map[string]map[string]bool {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	out := map[string]map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if out[rel] == nil {
			out[rel] = map[string]bool{}
		}
		for _, imp := range f.Imports {
			out[rel][strings.Trim(imp.Path.Value, `"`)] = true
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

func within(dir, room string) bool {
	return dir == room || strings.HasPrefix(dir, room+string(os.PathSeparator))
}

// TestImports_FollowTheRooms encodes DESIGN.md's arrows: governance and abi
// import nothing of ours; evidence and policy only governance; only host
// touches wazero or extism; only the Pebble stores touch pebble and only
// the PostgreSQL stores (with internal/pgdb, internal/pgtest) pgx; the
// controller never imports host; the SDK and plugins only abi and sdk.
func TestImports_FollowTheRooms(t *testing.T) {
	ours := func(imp string) (string, bool) {
		if imp == module {
			return ".", true
		}
		if strings.HasPrefix(imp, module+"/") {
			return filepath.FromSlash(strings.TrimPrefix(imp, module+"/")), true
		}
		return "", false
	}
	allowed := map[string][]string{
		"governance": {},
		"abi":        {},
		"evidence":   {"governance", "evidence", filepath.Join("internal", "pgdb")},
		// policy/policyfile's templates and the default profiles name abi's
		// operations and tool ids.
		"policy":     {"governance", "abi", "policy", filepath.Join("internal", "pgdb")},
		"sdk":        {"abi", "sdk"},
		"plugins":    {"abi", "sdk", "plugins"},
		"certify":    {"governance", "evidence", "checkpoint", "certify"},
		"checkpoint": {"checkpoint"},
		"controller": {"governance", "evidence", "policy", "abi", "certify", "controller"},
		"host":       {"abi", "governance", "host"},
		// agents is pure translation: its own Request, no controller;
		// hooks maps it onto controller.Call and has no router of its own;
		// the command hook links only agents and the wire vocabulary.
		"agents":      {"governance", "abi", "agents"},
		"hooks":       {"agents", "controller", "governance", "abi", "pathfacts", "hooks"},
		"hookclient":  {"agents", "api", "hookclient"},
		"hookinstall": {"agents", "hookinstall"},
		// The sidecar: service over the engine; server over service; the
		// wire vocabulary and the Go client stay light (no engine).
		// service has its own types and no HTTP vocabulary (no api).
		"service": {".", "governance", "evidence", "policy", "controller", "abi", "pathfacts", filepath.Join("plugins", "builtin"), "agents", "hooks", "certify", "service"},
		// server reaches hooks only through service (controller: the
		// governed call a wire request maps onto, the broker's event type it
		// streams); server/wire is the one mapping of service's answers onto
		// the wire bodies.
		"server":                        {"governance", "controller", "abi", "service", "server", "api", filepath.Join("internal", "bearer"), filepath.Join("internal", "sse")},
		filepath.Join("server", "wire"): {"service", "api", "governance", "controller", "abi"},
		// The web console: the service's operations, the wire vocabulary and
		// its mapping (static files need nothing else), and the event-stream
		// writer.
		"console":                         {"service", "api", filepath.Join("server", "wire"), "governance", filepath.Join("internal", "sse"), "console"},
		"api":                             {"governance"},
		filepath.Join("server", "client"): {"governance", "api"},
		// The MCP proxy: the embedded assembly (root package) or the
		// sidecar's client.
		"mcp": {".", "controller", "governance", "evidence", "policy", "pathfacts", "host", "abi", "api", filepath.Join("server", "client"), filepath.Join("internal", "bearer"), "mcp"},
		// The bearer-token check both listeners make.
		filepath.Join("internal", "bearer"): {},
		// The server-sent event loop the API and the console share.
		filepath.Join("internal", "sse"): {},
	}
	pkgs := packageImports(t)
	for _, must := range []string{"governance", "evidence", "controller", "host", "abi"} {
		require.Contains(t, pkgs, must, "the walk must see every room")
	}
	require.True(t, pkgs["controller"][module+"/governance"], "the walk reads real imports")
	for dir, imports := range pkgs {
		for imp := range imports {
			if strings.Contains(imp, "tetratelabs/wazero") || strings.Contains(imp, "extism/go-sdk") {
				require.True(t, within(dir, "host") || within(dir, "cmd"), "%s imports %s: only host runs Wasm", dir, imp)
			}
			if within(dir, "agents") {
				for _, io := range []string{"os", "os/exec", "net", "net/http", "io/fs", "io/ioutil", "syscall"} {
					require.NotEqual(t, io, imp, "%s imports %s: agents/ is pure translation, no I/O", dir, imp)
				}
			}
			if strings.Contains(imp, "cockroachdb/pebble") {
				require.True(t, within(dir, filepath.Join("evidence", "pebblestore")) || within(dir, "policy") || within(dir, "cmd") || dir == ".",
					"%s imports %s: only the Pebble stores and the assembly touch Pebble", dir, imp)
			}
			if strings.Contains(imp, "jackc/pgx") {
				require.True(t, within(dir, filepath.Join("evidence", "pgstore")) || within(dir, filepath.Join("policy", "pgstore")) ||
					within(dir, filepath.Join("internal", "pgdb")) || within(dir, filepath.Join("internal", "pgtest")) || within(dir, "cmd") || dir == ".",
					"%s imports %s: only the PostgreSQL stores and their plumbing touch pgx", dir, imp)
			}
			target, isOurs := ours(imp)
			if !isOurs {
				continue
			}
			for room, may := range allowed {
				if !within(dir, room) {
					continue
				}
				ok := false
				for _, m := range may {
					ok = ok || within(target, m)
				}
				require.True(t, ok, "%s (room %s) may not import %s", dir, room, imp)
			}
		}
	}
}
