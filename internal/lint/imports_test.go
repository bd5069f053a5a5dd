package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/govhost/govhost"

// pkg is one package of the module as the walk found it: the imports of
// its non-test files and of its test files (build constraints ignored, so
// the wasip1 mains count too).
type pkg struct {
	imports, testImports map[string]bool
}

// packages walks the module and returns its packages by folder ("." for
// the root), skipping testdata, hidden folders and build outputs.
func packages(t *testing.T) map[string]*pkg {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	out := map[string]*pkg{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			if path == filepath.Join(root, "build") {
				return filepath.SkipDir // build outputs (.gitignore), e.g. make scaffold-test's generated gate projects
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := out[rel]
		if p == nil {
			p = &pkg{imports: map[string]bool{}, testImports: map[string]bool{}}
			out[rel] = p
		}
		into := p.imports
		if strings.HasSuffix(path, "_test.go") {
			into = p.testImports
		}
		for _, imp := range f.Imports {
			into[strings.Trim(imp.Path.Value, `"`)] = true
		}
		return nil
	})
	require.NoError(t, err)
	// A folder of tests alone is no package of the tree's rooms.
	for dir, p := range out {
		if len(p.imports) == 0 && !hasGoFiles(t, filepath.Join(root, dir)) {
			delete(out, dir)
		}
	}
	require.Contains(t, out, "governance", "the walk must see every room")
	require.True(t, out["controller"].imports[module+"/governance"], "the walk reads real imports")
	return out
}

// hasGoFiles reports whether dir holds a non-test Go file.
func hasGoFiles(t *testing.T, dir string) bool {
	t.Helper()
	entries, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	for _, e := range entries {
		if !strings.HasSuffix(e, "_test.go") {
			return true
		}
	}
	return false
}

// ours returns the folder of one of our packages ("." for the root).
func ours(imp string) (string, bool) {
	if imp == module {
		return ".", true
	}
	if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
		return rest, true
	}
	return "", false
}

// matches reports whether dir is pattern, or below it for "x/...";
// "..." matches everything.
func matches(dir, pattern string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return dir == base || strings.HasPrefix(dir, base+"/")
	}
	return dir == pattern
}

func matchesAny(dir string, patterns []string) bool {
	for _, p := range patterns {
		if matches(dir, p) {
			return true
		}
	}
	return false
}

func sorted[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestRooms_EveryPackageHasARow: every package of the module has its row
// in rooms (DESIGN.md's table), and every row but a planned one names a
// package that exists.
func TestRooms_EveryPackageHasARow(t *testing.T) {
	pkgs := packages(t)
	for _, dir := range sorted(pkgs) {
		_, ok := rooms[dir]
		require.True(t, ok, "package %s has no row in rooms (internal/lint/rooms_test.go): give it its room as DESIGN.md does", dir)
	}
	for _, dir := range sorted(rooms) {
		if rooms[dir].planned {
			continue
		}
		require.Contains(t, pkgs, dir, "rooms has a row for %s, which is no package of the tree: drop the row (or mark it planned)", dir)
	}
}

// TestImports_FollowTheRooms: every import of ours in a non-test file is in
// its package's row, as an allowed arrow or a "today" one.
func TestImports_FollowTheRooms(t *testing.T) {
	pkgs := packages(t)
	for _, dir := range sorted(pkgs) {
		r := rooms[dir]
		for _, imp := range sorted(pkgs[dir].imports) {
			target, isOurs := ours(imp)
			if !isOurs {
				continue
			}
			ok := matchesAny(target, r.may)
			for _, a := range r.today {
				ok = ok || matches(target, a.to)
			}
			require.True(t, ok, "%s may not import %s (DESIGN.md's rooms: arrows point down, never sideways)", dir, imp)
		}
	}
}

// TestRooms_TodayArrowsStillExist: a "today" arrow names an import the
// code still has; once the step that removes it lands, its entry goes.
func TestRooms_TodayArrowsStillExist(t *testing.T) {
	pkgs := packages(t)
	for _, dir := range sorted(rooms) {
		for _, a := range rooms[dir].today {
			found := false
			if p := pkgs[dir]; p != nil {
				for imp := range p.imports {
					if target, isOurs := ours(imp); isOurs && matches(target, a.to) {
						found = true
					}
				}
			}
			require.True(t, found, "%s no longer imports %s (%s): drop the today arrow from its row", dir, a.to, a.step)
		}
	}
	for _, dir := range sorted(noHTTP) {
		for _, a := range noHTTP[dir] {
			require.True(t, pkgs[dir] != nil && pkgs[dir].imports[a.to], "%s no longer imports %s (%s): drop the today entry", dir, a.to, a.step)
		}
	}
}

// TestImports_TestSupportOnlyInTests: fixtures, conformance suites and
// fault injection are imported by tests only.
func TestImports_TestSupportOnlyInTests(t *testing.T) {
	pkgs := packages(t)
	for _, dir := range sorted(pkgs) {
		for imp := range pkgs[dir].imports {
			if target, isOurs := ours(imp); isOurs && rooms[target].testOnly {
				require.Fail(t, "test support in shipped code", "%s imports %s, which only tests may import", dir, imp)
			}
		}
	}
}

// TestImports_ThirdPartyWhereItIsThePoint: a third-party module is
// imported only by the rooms it is the point of (only host runs Wasm, only
// the Pebble stores and the assembly touch Pebble, ...).
func TestImports_ThirdPartyWhereItIsThePoint(t *testing.T) {
	pkgs := packages(t)
	for _, dir := range sorted(pkgs) {
		for _, imp := range sorted(pkgs[dir].imports) {
			if _, isOurs := ours(imp); isOurs || !strings.Contains(strings.Split(imp, "/")[0], ".") {
				continue // ours, or the standard library
			}
			known := false
			for mod, who := range thirdParty {
				if imp == mod || strings.HasPrefix(imp, mod+"/") {
					known = true
					require.True(t, matchesAny(dir, who), "%s imports %s: only %v may", dir, imp, who)
				}
			}
			require.True(t, known, "%s imports %s, a third-party module no room has as its point: add it to thirdParty with the rooms that need it", dir, imp)
		}
	}
}

// TestImports_NoIOAndNoHTTPWhereDesigned: vocabularies and agents' pure
// translation touch no files, processes or network; the engine-level
// packages know nothing of HTTP.
func TestImports_NoIOAndNoHTTPWhereDesigned(t *testing.T) {
	pkgs := packages(t)
	for _, dir := range noIO {
		for _, io := range []string{"os", "os/exec", "net", "net/http", "io/fs", "io/ioutil", "syscall"} {
			require.False(t, pkgs[dir].imports[io], "%s imports %s: it is pure translation or vocabulary, no I/O", dir, io)
		}
	}
	for _, dir := range sorted(noHTTP) {
		for imp := range pkgs[dir].imports {
			if imp != "net/http" && !strings.HasPrefix(imp, "net/http/") {
				continue
			}
			today := false
			for _, a := range noHTTP[dir] {
				today = today || a.to == imp
			}
			require.True(t, today, "%s imports %s: it knows nothing of HTTP (the edge is server)", dir, imp)
		}
	}
}
