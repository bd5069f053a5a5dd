package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	assdk "github.com/govhost/govhost/sdk/assemblyscript"
	csdk "github.com/govhost/govhost/sdk/c"
	rustsdk "github.com/govhost/govhost/sdk/rust"
)

//go:embed templates
var templates embed.FS

// Languages lists the languages New scaffolds, sorted.
func Languages() []string {
	names := make([]string, 0, len(langs))
	for l := range langs {
		names = append(names, l)
	}
	sort.Strings(names)
	return names
}

// Errors of New, matched with errors.Is.
var (
	ErrUnknownLanguage = errors.New("scaffold: unknown language")
	ErrBadName         = errors.New("scaffold: a gate name is 1-64 characters of a-z, 0-9, _ and -, starting with a letter")
	ErrExists          = errors.New("scaffold: the directory exists and is not empty")
	ErrNoGovhostSource = errors.New("scaffold: a Go gate needs the govhost source tree (--govhost-src)")
)

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// Options of New.
type Options struct {
	Lang string // go, c, rust or assemblyscript
	Name string // the gate's name: module and reason-code prefix
	Dir  string // where to write the project; must not exist or be empty
	// GovhostSrc is the govhost source tree a Go gate builds against
	// (its go.mod replace directive); required for Go.
	GovhostSrc string
}

// file is one generated file: from a template, or the bytes of an SDK source.
type file struct {
	Path, What string
	tmpl       string
	data       []byte
}

type language struct {
	name, toolchain string
	setup           []string
	files           []file
}

var langs = map[string]language{
	"go": {name: "Go", toolchain: "Go 1.26", files: []file{
		{Path: "main.go", What: "the gate", tmpl: "go/main.go.tmpl"},
		{Path: "go.mod", What: "the module, building against the govhost source tree", tmpl: "go/go.mod.tmpl"},
		{Path: "Makefile", What: "build and test", tmpl: "go/Makefile.tmpl"},
	}},
	"c": {name: "C", toolchain: "Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32",
		setup: []string{"apt-get install -y clang lld wasi-libc libclang-rt-14-dev-wasm32"}, files: []file{
			{Path: "gate.c", What: "the gate", tmpl: "c/gate.c.tmpl"},
			{Path: "govhost_gate.h", What: "the C SDK (a copy of govhost's sdk/c/govhost_gate.h)", data: csdk.Header},
			{Path: "Makefile", What: "build and test", tmpl: "c/Makefile.tmpl"},
		}},
	"rust": {name: "Rust", toolchain: "Debian's rustc with libstd-rust-dev-wasm32; no cargo",
		setup: []string{"apt-get install -y rustc libstd-rust-dev-wasm32"}, files: []file{
			{Path: "src/lib.rs", What: "the gate", tmpl: "rust/lib.rs.tmpl"},
			{Path: "govhost_gate/lib.rs", What: "the Rust SDK (a copy of govhost's sdk/rust/src)", data: rustsdk.Lib},
			{Path: "govhost_gate/json.rs", What: "the Rust SDK's JSON reader", data: rustsdk.JSON},
			{Path: "Makefile", What: "build (two rustc calls) and test", tmpl: "rust/Makefile.tmpl"},
		}},
	"assemblyscript": {name: "AssemblyScript", toolchain: "node and npm",
		setup: []string{"npm install"}, files: []file{
			{Path: "assembly/index.ts", What: "the gate", tmpl: "assemblyscript/index.ts.tmpl"},
			{Path: "assembly/govhost.ts", What: "the AssemblyScript SDK (a copy of govhost's sdk/assemblyscript)", data: assdk.Source},
			{Path: "package.json", What: "the AssemblyScript compiler, pinned", tmpl: "assemblyscript/package.json.tmpl"},
			{Path: "Makefile", What: "build and test", tmpl: "assemblyscript/Makefile.tmpl"},
		}},
}

var common = []file{
	{Path: "cases.yaml", What: "the gate's test cases (`govhost test`)", tmpl: "common/cases.yaml.tmpl"},
	{Path: "README.md", What: "this file", tmpl: "common/README.md.tmpl"},
	{Path: ".gitignore", What: "build outputs", tmpl: "common/gitignore.tmpl"},
}

// New writes the project and returns the paths it wrote, relative to Dir.
func New(opts Options) ([]string, error) {
	lang, ok := langs[opts.Lang]
	if !ok {
		return nil, fmt.Errorf("%w %q (one of %s)", ErrUnknownLanguage, opts.Lang, strings.Join(Languages(), ", "))
	}
	if !nameRE.MatchString(opts.Name) {
		return nil, fmt.Errorf("%w: %q", ErrBadName, opts.Name)
	}
	src := ""
	if opts.Lang == "go" {
		if opts.GovhostSrc == "" {
			return nil, ErrNoGovhostSource
		}
		abs, err := filepath.Abs(opts.GovhostSrc)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(abs, "sdk", "sdk.go")); err != nil {
			return nil, fmt.Errorf("%w: %s has no sdk/sdk.go", ErrNoGovhostSource, abs)
		}
		src = abs
	}
	if entries, err := os.ReadDir(opts.Dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrExists, opts.Dir)
	}
	files := append(append([]file(nil), lang.files...), common...)
	data := map[string]any{
		"Name": opts.Name, "Lang": opts.Lang, "LangName": lang.name, "Toolchain": lang.toolchain, "Setup": lang.setup,
		"Ident": strings.ReplaceAll(opts.Name, "-", "_"), "Type": typeName(opts.Name),
		"GovhostSrc": src, "ASVersion": assdk.AssemblyScriptVersion, "Files": files,
	}
	var written []string
	for _, f := range files {
		body := f.data
		if f.tmpl != "" {
			t, err := template.ParseFS(templates, "templates/"+f.tmpl)
			if err != nil {
				return written, err
			}
			var b bytes.Buffer
			if err := t.Execute(&b, data); err != nil {
				return written, err
			}
			body = b.Bytes()
		}
		p := filepath.Join(opts.Dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, err
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return written, err
		}
		written = append(written, f.Path)
	}
	return written, nil
}

// typeName is name in UpperCamelCase ("my-gate" → "MyGate"), for the Rust
// gate type.
func typeName(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if r == '-' || r == '_' {
			up = true
			continue
		}
		if up && r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		up = false
		b.WriteRune(r)
	}
	return b.String()
}

// FindGovhostSource returns the govhost source tree containing dir (the
// nearest ancestor whose go.mod declares module github.com/govhost/govhost).
func FindGovhostSource(dir string) (string, bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			regexp.MustCompile(`(?m)^module\s+github\.com/govhost/govhost\s*$`).Match(b) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
