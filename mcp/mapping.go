package mcp

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/pathfacts"
)

// ToolSpec maps one MCP tool onto govhost's operation vocabulary (the
// operations the built-in gates decide on: read_file, search_files,
// create_file, overwrite_file, modify_file, create_directory,
// execute_command, network_access) and names its path-carrying arguments.
type ToolSpec struct {
	// Operation is the operation a call of the tool performs; "" leaves it
	// unclassified (gates then decide by tool id alone, and pathguard denies
	// an operation it cannot infer).
	Operation string `json:"operation,omitempty"`
	// Paths names the arguments that carry paths; "name[]" is an array of
	// paths. Nil means the defaults (path, file_path); [] means none.
	Paths []string `json:"paths,omitempty"`
	// AbsolutePaths refuses a call whose path argument is relative: for
	// servers that resolve relative paths against a directory of their own
	// (server-filesystem joins them to its allowed directories, not to its
	// working directory), so the gates and the server would judge different
	// files.
	AbsolutePaths bool `json:"absolute_paths,omitempty"`
}

// ServerMapping is the mapping of one server's tools.
type ServerMapping struct {
	// AbsolutePaths applies ToolSpec.AbsolutePaths to every tool.
	AbsolutePaths bool                `json:"absolute_paths,omitempty"`
	Tools         map[string]ToolSpec `json:"tools"`
}

// MappingFile is the small file that overrides the default mapping:
//
//	{"tools":   {"TOOL": {"operation": "read_file", "paths": ["path"]}},
//	 "servers": {"NAME": {"tools": {"move_file": {"operation": "modify_file", "paths": ["source", "destination"]}}}}}
//
// "tools" applies to every server, "servers" to the server the proxy was
// started for by its --name (overriding "tools").
type MappingFile struct {
	Tools   map[string]ToolSpec      `json:"tools,omitempty"`
	Servers map[string]ServerMapping `json:"servers,omitempty"`
}

// ErrMapping reports a mapping file that cannot be used.
var ErrMapping = errors.New("mcp: invalid tool mapping")

// builtinMappings are the shipped mappings, keyed by the serverInfo.name an
// upstream reports in its initialize result.
//
//go:embed mappings/builtin.json
var builtinMappingsJSON []byte

var builtinMappings = mustBuiltin()

func mustBuiltin() map[string]ServerMapping {
	var m map[string]ServerMapping
	if err := decodeStrict(builtinMappingsJSON, &m); err != nil {
		panic(err)
	}
	for name, s := range m {
		if err := s.validate(); err != nil {
			panic(fmt.Sprintf("mcp: built-in mapping %s: %v", name, err))
		}
	}
	return m
}

// LoadMapping reads and validates a mapping file.
func LoadMapping(path string) (*MappingFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMapping, err)
	}
	return ParseMapping(b)
}

// ParseMapping decodes and validates a mapping file's text: unknown fields,
// unknown operations and malformed argument names are refused.
func ParseMapping(b []byte) (*MappingFile, error) {
	var m MappingFile
	if err := decodeStrict(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMapping, err)
	}
	if err := (ServerMapping{Tools: m.Tools}).validate(); err != nil {
		return nil, fmt.Errorf("%w: tools: %w", ErrMapping, err)
	}
	for name, s := range m.Servers {
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("%w: servers.%s: %w", ErrMapping, name, err)
		}
	}
	return &m, nil
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the mapping object")
	}
	return nil
}

func (s ServerMapping) validate() error {
	for tool, spec := range s.Tools {
		if tool == "" {
			return errors.New("empty tool name")
		}
		if spec.Operation != "" && !abi.IsOperation(spec.Operation) {
			return fmt.Errorf("tool %s: unknown operation %q", tool, spec.Operation)
		}
		for _, p := range spec.Paths {
			name := strings.TrimSuffix(p, pathfacts.ArraySuffix)
			if name == "" || strings.ContainsAny(name, "[]") {
				return fmt.Errorf("tool %s: bad path argument name %q", tool, p)
			}
		}
	}
	return nil
}

// Source says where a tool's spec came from (logged once per tool).
type Source string

const (
	SourceMappingServer Source = "mapping file (server)"
	SourceMappingTools  Source = "mapping file (tools)"
	SourceBuiltin       Source = "built-in mapping"
	SourceAnnotations   Source = "tool annotations"
	SourceNone          Source = "unmapped (governed by name)"
)

// Mapper resolves tool specs for one proxied server.
type Mapper struct {
	// Server is the proxy's --name for the server.
	Server string
	// File is the user's mapping file, if any.
	File *MappingFile
}

// Spec returns the spec of tool: the mapping file's entry for this server,
// then its entry for every server, then the built-in mapping for the
// upstream's reported name, then the tool's annotations (from tools/list;
// nil when not seen), else unmapped.
func (m Mapper) Spec(upstream, tool string, ann *sdk.ToolAnnotations) (ToolSpec, Source) {
	if m.File != nil {
		if s, ok := m.File.Servers[m.Server]; ok {
			if spec, ok := s.Tools[tool]; ok {
				spec.AbsolutePaths = spec.AbsolutePaths || s.AbsolutePaths
				return spec, SourceMappingServer
			}
		}
		if spec, ok := m.File.Tools[tool]; ok {
			return spec, SourceMappingTools
		}
	}
	if s, ok := builtinMappings[upstream]; ok {
		if spec, ok := s.Tools[tool]; ok {
			spec.AbsolutePaths = spec.AbsolutePaths || s.AbsolutePaths
			return spec, SourceBuiltin
		}
	}
	if ann != nil {
		return fromAnnotations(*ann), SourceAnnotations
	}
	return ToolSpec{}, SourceNone
}

// fromAnnotations classifies a tool by its MCP hints, with the
// specification's defaults (readOnlyHint false, destructiveHint true,
// openWorldHint true): a tool that may reach an open world is
// network_access; a closed-world read-only tool reads; a closed-world
// destructive one modifies; an additive one creates. Hints come from the
// server and are not trusted to loosen anything: the operation only picks
// which rules of the policy apply.
func fromAnnotations(a sdk.ToolAnnotations) ToolSpec {
	openWorld := a.OpenWorldHint == nil || *a.OpenWorldHint
	destructive := a.DestructiveHint == nil || *a.DestructiveHint
	switch {
	case openWorld:
		return ToolSpec{Operation: abi.OpNetworkAccess}
	case a.ReadOnlyHint:
		return ToolSpec{Operation: abi.OpReadFile}
	case destructive:
		return ToolSpec{Operation: abi.OpModifyFile}
	default:
		return ToolSpec{Operation: abi.OpCreateFile}
	}
}

// ToolID is the govhost tool id of an MCP tool: "<server>/<tool>", so a
// policy binds per server and per tool.
func ToolID(server, tool string) string { return server + "/" + tool }

// relativePath returns the first relative path among the spec's path
// arguments of args, if any.
func (s ToolSpec) relativePath(args map[string]any) (string, bool) {
	names := s.Paths
	if names == nil {
		names = pathfacts.DefaultArgNames()
	}
	check := func(v any) (string, bool) {
		p, ok := v.(string)
		if ok && p != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
			return p, true
		}
		return "", false
	}
	for _, n := range names {
		base, array := strings.CutSuffix(n, pathfacts.ArraySuffix)
		v := args[base]
		if !array {
			if p, ok := check(v); ok {
				return p, true
			}
			continue
		}
		list, _ := v.([]any)
		for _, e := range list {
			if p, ok := check(e); ok {
				return p, true
			}
		}
	}
	return "", false
}

// FilesystemUpstream is the serverInfo.name of the reference filesystem
// server (@modelcontextprotocol/server-filesystem), whose mapping ships.
const FilesystemUpstream = "secure-filesystem-server"

// FilesystemToolIDs returns the tool ids of the reference filesystem
// server's mapped tools under the proxy name server, sorted: what a
// workspace policy binds to guard it.
func FilesystemToolIDs(server string) []string {
	var ids []string
	for tool := range builtinMappings[FilesystemUpstream].Tools {
		ids = append(ids, ToolID(server, tool))
	}
	slices.Sort(ids)
	return ids
}
