package pathguard_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/plugins/pathguard"
)

func TestNew_ValidConfigs(t *testing.T) {
	for _, cfg := range []string{
		`{"kind":"guard_paths"}`,
		`{"kind":"guard_paths","allowed_paths":null,"denied_paths":null}`,
		`{"kind":"guard_paths","allowed_paths":["/ws/"],"denied_paths":[".env","*.key","/ws/secret","", "~/x"],"home":"/home/u"}`,
		`{"kind":"workspace","root":"/ws"}`,
		`{"kind":"workspace","root":"~/proj","home":"/home/u","allowed_operations":null}`,
		`{"kind":"workspace","root":"/ws","allowed_operations":[]}`,
		`{"kind":"workspace","root":"/ws","allowed_operations":["read_file","search_files","create_file","overwrite_file","modify_file","create_directory","execute_command","network_access"]}`,
		`{"kind":"path_scope","paths":[]}`,
		`{"kind":"workspace","root":"$workspace"}`,
		`{"kind":"virtual","mounts":[{"name":"tenant"},{"name":"skills","read_only":true}],"roots":["/tenant/sessions/s-1","skills"],"cwd":"tenant/sessions/s-1/./"}`,
		`{"kind":"virtual","mounts":[],"allowed_operations":["read_file"]}`,
		`{"kind":"path_scope","paths":["$workspace","$workspace/docs/./x/","/srv/shared"]}`,
		`{"kind":"guard_paths","allowed_paths":["$workspace","/srv"],"denied_paths":["$workspace/.env.d","*.key"]}`,
		`{"kind":"path_scope","paths":["/ws","/x/brief.md"],"allowed_operations":["read_file"]}`,
	} {
		g, err := pathguard.New([]byte(cfg))
		require.NoError(t, err, cfg)
		require.NotEmpty(t, g.Kind())
	}
}

func TestNew_ConfigErrors(t *testing.T) {
	cases := []struct {
		name, cfg, field string
		sentinel         error
	}{
		{"empty", ``, "kind", pathguard.ErrMissingField},
		{"null", `null`, "kind", pathguard.ErrMissingField},
		{"not an object", `[]`, "", pathguard.ErrType},
		{"no kind", `{"root":"/ws"}`, "kind", pathguard.ErrMissingField},
		{"kind not a string", `{"kind":1}`, "kind", pathguard.ErrType},
		{"unknown kind", `{"kind":"allow_all"}`, "kind", pathguard.ErrUnknownKind},
		{"field of another kind", `{"kind":"guard_paths","root":"/ws"}`, "root", pathguard.ErrUnknownField},
		{"typo", `{"kind":"workspace","root":"/ws","allowed_operation":["read_file"]}`, "allowed_operation", pathguard.ErrUnknownField},
		{"relative root", `{"kind":"workspace","root":"ws"}`, "root", pathguard.ErrNotAbsolute},
		{"virtual without mounts", `{"kind":"virtual"}`, "mounts", pathguard.ErrMissingField},
		{"virtual blank cwd", `{"kind":"virtual","mounts":[{"name":"t"}],"cwd":""}`, "cwd", pathguard.ErrVirtualPath},
		{"virtual whitespace cwd", `{"kind":"virtual","mounts":[{"name":"t"}],"cwd":" "}`, "cwd", pathguard.ErrVirtualPath},
		{"virtual mount with two components", `{"kind":"virtual","mounts":[{"name":"a/b"}]}`, "mounts[0].name", pathguard.ErrVirtualPath},
		{"virtual mount dot-dot", `{"kind":"virtual","mounts":[{"name":".."}]}`, "mounts[0].name", pathguard.ErrVirtualPath},
		{"virtual mount drive", `{"kind":"virtual","mounts":[{"name":"c:"}]}`, "mounts[0].name", pathguard.ErrVirtualPath},
		{"virtual duplicate mount", `{"kind":"virtual","mounts":[{"name":"t"},{"name":"t"}]}`, "mounts[1].name", pathguard.ErrVirtualPath},
		{"virtual mount without a name", `{"kind":"virtual","mounts":[{"read_only":true}]}`, "mounts[0].name", pathguard.ErrMissingField},
		{"virtual mount unknown field", `{"kind":"virtual","mounts":[{"name":"t","ro":true}]}`, "mounts[0].ro", pathguard.ErrUnknownField},
		{"virtual read_only not a bool", `{"kind":"virtual","mounts":[{"name":"t","read_only":"yes"}]}`, "mounts[0].read_only", pathguard.ErrType},
		{"virtual cwd escapes the root", `{"kind":"virtual","mounts":[{"name":"t"}],"cwd":"/t/../.."}`, "cwd", pathguard.ErrVirtualPath},
		{"virtual root with a ~", `{"kind":"virtual","mounts":[{"name":"t"}],"roots":["/t/~x"]}`, "roots[0]", pathguard.ErrVirtualPath},
		{"virtual takes no host root", `{"kind":"virtual","mounts":[{"name":"t"}],"root":"/t"}`, "root", pathguard.ErrUnknownField},
		{"$workspace escapes", `{"kind":"workspace","root":"$workspace/../x"}`, "root", pathguard.ErrWorkspaceEscape},
		{"$workspace scope escapes", `{"kind":"path_scope","paths":["/a","$workspace/a/../.."]}`, "paths[1]", pathguard.ErrWorkspaceEscape},
		{"$workspace denied entry escapes", `{"kind":"guard_paths","denied_paths":["$workspace/.."]}`, "denied_paths[0]", pathguard.ErrWorkspaceEscape},
		{"$workspaces is not the workspace", `{"kind":"workspace","root":"$workspaces"}`, "root", pathguard.ErrNotAbsolute},
		{"missing root", `{"kind":"workspace"}`, "root", pathguard.ErrMissingField},
		{"empty root", `{"kind":"workspace","root":""}`, "root", pathguard.ErrMissingField},
		{"tilde root without home", `{"kind":"workspace","root":"~/ws"}`, "root", pathguard.ErrHome},
		{"other user's home", `{"kind":"workspace","root":"~bob/ws","home":"/home/u"}`, "root", pathguard.ErrHome},
		{"relative home", `{"kind":"workspace","root":"/ws","home":"home"}`, "home", pathguard.ErrNotAbsolute},
		{"NUL in root", `{"kind":"workspace","root":"/ws\u0000x"}`, "root", pathguard.ErrNUL},
		{"unknown operation", `{"kind":"workspace","root":"/ws","allowed_operations":["read_file","delete_file"]}`, "allowed_operations[1]", pathguard.ErrUnknownOperation},
		{"unknown checked operation", `{"kind":"workspace","root":"/ws","checked_operations":["write_file"]}`, "checked_operations[0]", pathguard.ErrUnknownOperation},
		{"every_path_argument not a boolean", `{"kind":"guard_paths","every_path_argument":"yes"}`, "every_path_argument", pathguard.ErrType},
		{"every_path_argument is guard_paths only", `{"kind":"workspace","root":"/ws","every_path_argument":true}`, "every_path_argument", pathguard.ErrUnknownField},
		{"operation case matters", `{"kind":"workspace","root":"/ws","allowed_operations":["READ_FILE"]}`, "allowed_operations[0]", pathguard.ErrUnknownOperation},
		{"operations not a list", `{"kind":"workspace","root":"/ws","allowed_operations":"read_file"}`, "allowed_operations", pathguard.ErrType},
		{"scope paths missing", `{"kind":"path_scope"}`, "paths", pathguard.ErrMissingField},
		{"scope paths null", `{"kind":"path_scope","paths":null}`, "paths", pathguard.ErrMissingField},
		{"relative scope", `{"kind":"path_scope","paths":["/ws","brief.md"]}`, "paths[1]", pathguard.ErrNotAbsolute},
		{"scope not a string", `{"kind":"path_scope","paths":[1]}`, "paths[0]", pathguard.ErrType},
		{"relative allowed root", `{"kind":"guard_paths","allowed_paths":["/ok","project"]}`, "allowed_paths[1]", pathguard.ErrNotAbsolute},
		{"empty allowed root", `{"kind":"guard_paths","allowed_paths":[""]}`, "allowed_paths[0]", pathguard.ErrNotAbsolute},
		{"denied tilde without home", `{"kind":"guard_paths","denied_paths":["~/.ssh"]}`, "denied_paths[0]", pathguard.ErrHome},
		{"denied null entry", `{"kind":"guard_paths","denied_paths":[null]}`, "denied_paths[0]", pathguard.ErrType},
		{"denied NUL", `{"kind":"guard_paths","denied_paths":["a\u0000"]}`, "denied_paths[0]", pathguard.ErrNUL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pathguard.New([]byte(tc.cfg))
			require.Error(t, err)
			require.ErrorIs(t, err, pathguard.ErrConfig)
			require.ErrorIs(t, err, tc.sentinel)
			var ce *pathguard.ConfigError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, tc.field, ce.Field)
			if tc.field != "" {
				require.Contains(t, err.Error(), tc.field)
			}
			wrapped := fmt.Errorf("binding %q: %w", "pathguard", err)
			require.ErrorIs(t, wrapped, pathguard.ErrConfig)
			require.ErrorIs(t, wrapped, tc.sentinel)
			require.True(t, errors.As(wrapped, &ce))
		})
	}
}
