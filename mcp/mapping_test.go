package mcp_test

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/mcp"
)

func TestParseMapping_Refusals(t *testing.T) {
	for _, bad := range []string{
		`{"tools":{"t":{"operation":"delete_everything"}}}`,
		`{"tools":{"t":{"paths":["a[]b"]}}}`,
		`{"tools":{"t":{"paths":["[]"]}}}`,
		`{"tools":{"t":{"operaton":"read_file"}}}`,
		`{"servers":{"s":{"tools":{"":{}}}}}`,
		`{"tools":{}} {}`,
		`[1]`,
	} {
		_, err := mcp.ParseMapping([]byte(bad))
		require.ErrorIs(t, err, mcp.ErrMapping, bad)
	}
	m, err := mcp.ParseMapping([]byte(`{"tools":{"copy":{"operation":"create_file","paths":["from","to"]}},"servers":{"fs":{"absolute_paths":true,"tools":{"copy":{"operation":"modify_file","paths":["files[]"]}}}}}`))
	require.NoError(t, err)
	require.Len(t, m.Servers, 1)
}

// TestMapper_Precedence: the mapping file's server entry, then its
// entry for every server, then the built-in mapping for the upstream, then
// annotations, else unmapped.
func TestMapper_Precedence(t *testing.T) {
	file, err := mcp.ParseMapping([]byte(`{"tools":{"move_file":{"operation":"create_file","paths":["to"]}},"servers":{"fs":{"absolute_paths":true,"tools":{"read_file":{"operation":"search_files","paths":["dir"]}}}}}`))
	require.NoError(t, err)
	m := mcp.Mapper{Server: "fs", File: file}
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}

	spec, src := m.Spec(mcp.FilesystemUpstream, "read_file", ro)
	require.Equal(t, mcp.SourceMappingServer, src)
	require.Equal(t, mcp.ToolSpec{Operation: "search_files", Paths: []string{"dir"}, AbsolutePaths: true}, spec)

	spec, src = m.Spec(mcp.FilesystemUpstream, "move_file", nil)
	require.Equal(t, mcp.SourceMappingTools, src)
	require.Equal(t, []string{"to"}, spec.Paths)

	spec, src = mcp.Mapper{Server: "fs"}.Spec(mcp.FilesystemUpstream, "read_multiple_files", ro)
	require.Equal(t, mcp.SourceBuiltin, src)
	require.Equal(t, mcp.ToolSpec{Operation: "read_file", Paths: []string{"paths[]"}, AbsolutePaths: true}, spec)

	_, src = mcp.Mapper{Server: "fs"}.Spec("another-server", "read_multiple_files", ro)
	require.Equal(t, mcp.SourceAnnotations, src, "the built-in mapping is for the server that reports its name")

	spec, src = mcp.Mapper{}.Spec("x", "t", nil)
	require.Equal(t, mcp.SourceNone, src)
	require.Equal(t, mcp.ToolSpec{}, spec, "unmapped: governed by id, default path names")
}

// TestMapper_Annotations: the specification's defaults (destructive and
// open world unless said otherwise).
func TestMapper_Annotations(t *testing.T) {
	f, tr := new(false), new(true)
	cases := []struct {
		ann  sdk.ToolAnnotations
		want string
	}{
		{sdk.ToolAnnotations{}, "network_access"},
		{sdk.ToolAnnotations{ReadOnlyHint: true}, "network_access"},
		{sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: f}, "read_file"},
		{sdk.ToolAnnotations{OpenWorldHint: f}, "modify_file"},
		{sdk.ToolAnnotations{OpenWorldHint: f, DestructiveHint: tr}, "modify_file"},
		{sdk.ToolAnnotations{OpenWorldHint: f, DestructiveHint: f}, "create_file"},
		{sdk.ToolAnnotations{OpenWorldHint: tr, DestructiveHint: f}, "network_access"},
	}
	for _, c := range cases {
		spec, src := mcp.Mapper{}.Spec("x", "t", &c.ann)
		require.Equal(t, mcp.SourceAnnotations, src)
		require.Equal(t, c.want, spec.Operation, "%+v", c.ann)
		require.Nil(t, spec.Paths)
	}
}

func TestFilesystemToolIDs(t *testing.T) {
	ids := mcp.FilesystemToolIDs("fs")
	require.Contains(t, ids, "fs/move_file")
	require.Contains(t, ids, "fs/read_text_file")
	require.IsIncreasing(t, ids)
}
