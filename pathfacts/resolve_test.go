package pathfacts_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/pathfacts"
)

// tree builds a real temporary layout:
//
//	root/ws/notes.txt
//	root/ws/sub/
//	root/ws/link-in      -> notes.txt          (relative, inside)
//	root/ws/link-out     -> root/outside       (dir, outside)
//	root/ws/dangling     -> root/outside/new.txt (missing target)
//	root/ws/dangdir      -> root/outside/newdir  (missing dir target)
//	root/ws/loop1 -> loop2, root/ws/loop2 -> loop1
//	root/ws/chain1 -> chain2 -> notes.txt
//	root/outside/secret.txt
func tree(t *testing.T) (root, ws, outside string) {
	t.Helper()
	root, err := pathfacts.Canonical(t.TempDir())
	require.NoError(t, err)
	ws = filepath.Join(root, "ws")
	outside = filepath.Join(root, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o644))
	links := map[string]string{
		"link-in":  "notes.txt",
		"link-out": outside,
		"dangling": filepath.Join(outside, "new.txt"),
		"dangdir":  filepath.Join(outside, "newdir"),
		"loop1":    "loop2",
		"loop2":    "loop1",
		"chain1":   "chain2",
		"chain2":   "notes.txt",
		"up":       "..",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(ws, name)))
	}
	return root, ws, outside
}

func TestResolvePath_Cases(t *testing.T) {
	root, ws, outside := tree(t)
	cases := []struct {
		name string
		raw  string
		want abi.PathFact
	}{
		{"existing file", "notes.txt", abi.PathFact{Resolved: ws + "/notes.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: ws + "/notes.txt"}},
		{"existing dir", "sub/", abi.PathFact{Resolved: ws + "/sub", Exists: true, Kind: abi.PathKindDir, NearestExisting: ws + "/sub"}},
		{"absolute", ws + "/notes.txt", abi.PathFact{Resolved: ws + "/notes.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: ws + "/notes.txt"}},
		{"missing in existing dir", "new.txt", abi.PathFact{Resolved: ws + "/new.txt", Kind: abi.PathKindMissing, NearestExisting: ws}},
		{"missing nested", "a/b/c.txt", abi.PathFact{Resolved: ws + "/a/b/c.txt", Kind: abi.PathKindMissing, NearestExisting: ws}},
		{"final symlink inside", "link-in", abi.PathFact{Resolved: ws + "/notes.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: ws + "/notes.txt", Link: true}},
		{"symlink chain", "chain1", abi.PathFact{Resolved: ws + "/notes.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: ws + "/notes.txt", Link: true}},
		{"intermediate symlink escapes", "link-out/secret.txt", abi.PathFact{Resolved: outside + "/secret.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: outside + "/secret.txt"}},
		{"intermediate symlink, missing leaf", "link-out/new/x.txt", abi.PathFact{Resolved: outside + "/new/x.txt", Kind: abi.PathKindMissing, NearestExisting: outside}},
		{"dangling final symlink is followed", "dangling", abi.PathFact{Resolved: outside + "/new.txt", Kind: abi.PathKindMissing, NearestExisting: outside, Link: true}},
		{"dangling intermediate symlink is followed", "dangdir/f.txt", abi.PathFact{Resolved: outside + "/newdir/f.txt", Kind: abi.PathKindMissing, NearestExisting: outside}},
		{"dot-dot after missing component", "missing/../../outside/secret.txt", abi.PathFact{Resolved: outside + "/secret.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: outside + "/secret.txt"}},
		{"dot-dot after missing, still missing", "missing/../../x.txt", abi.PathFact{Resolved: root + "/x.txt", Kind: abi.PathKindMissing, NearestExisting: root}},
		{"dot-dot after symlink is physical", "link-out/../ws/notes.txt", abi.PathFact{Resolved: ws + "/notes.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: ws + "/notes.txt"}},
		{"symlink to parent", "up/outside/secret.txt", abi.PathFact{Resolved: outside + "/secret.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: outside + "/secret.txt"}},
		{"file is not an ancestor", "notes.txt/child.md", abi.PathFact{Resolved: ws + "/notes.txt/child.md", Kind: abi.PathKindMissing, NearestExisting: ws}},
		{"dot-dot above root clamps", "../../../../../../../../..", abi.PathFact{Resolved: "/", Exists: true, Kind: abi.PathKindDir, NearestExisting: "/"}},
		{"final symlink to a dir, trailing slash", "link-out/", abi.PathFact{Resolved: outside, Exists: true, Kind: abi.PathKindDir, NearestExisting: outside, Link: true}},
		{"absolute final symlink", ws + "/link-in", abi.PathFact{Resolved: ws + "/notes.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: ws + "/notes.txt", Link: true}},
		{"dot-dot after a symlink is physical for the link test too", "link-out/../ws/link-in", abi.PathFact{Resolved: ws + "/notes.txt", Exists: true, Kind: abi.PathKindFile, NearestExisting: ws + "/notes.txt", Link: true}},
		{"redundant separators", ".//sub/./", abi.PathFact{Resolved: ws + "/sub", Exists: true, Kind: abi.PathKindDir, NearestExisting: ws + "/sub"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pathfacts.ResolvePath(ws, tc.raw)
			require.NoError(t, err)
			tc.want.Raw = tc.raw
			require.Equal(t, tc.want, got)
		})
	}
}

func TestResolvePath_OtherKind(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Skip("no device node")
	}
	got, err := pathfacts.ResolvePath("/", os.DevNull)
	require.NoError(t, err)
	require.Equal(t, abi.PathKindOther, got.Kind)
	require.True(t, got.Exists)
}

func TestResolvePath_Loop(t *testing.T) {
	_, ws, _ := tree(t)
	_, err := pathfacts.ResolvePath(ws, "loop1/x")
	require.ErrorIs(t, err, pathfacts.ErrSymlinkLoop)
	var ae *pathfacts.ArgError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, "loop1/x", ae.Path)
}

func TestResolvePath_LongChain(t *testing.T) {
	dir, err := pathfacts.Canonical(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "l0"), nil, 0o644))
	for i := 1; i <= pathfacts.MaxSymlinks+1; i++ {
		require.NoError(t, os.Symlink(filepath.Join(dir, name(i-1)), filepath.Join(dir, name(i))))
	}
	_, err = pathfacts.ResolvePath(dir, name(pathfacts.MaxSymlinks))
	require.NoError(t, err)
	_, err = pathfacts.ResolvePath(dir, name(pathfacts.MaxSymlinks+1))
	require.ErrorIs(t, err, pathfacts.ErrSymlinkLoop)
}

func name(i int) string { return "l" + string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func TestResolvePath_NUL(t *testing.T) {
	_, err := pathfacts.ResolvePath("/", "a\x00b")
	require.ErrorIs(t, err, pathfacts.ErrNUL)
}

func TestResolvePath_Home(t *testing.T) {
	_, ws, _ := tree(t)
	t.Setenv("HOME", ws+"/")
	got, err := pathfacts.ResolvePath("/", "~/notes.txt")
	require.NoError(t, err)
	require.Equal(t, ws+"/notes.txt", got.Resolved)
	require.Equal(t, "~/notes.txt", got.Raw)

	got, err = pathfacts.ResolvePath("/", "~")
	require.NoError(t, err)
	require.Equal(t, ws, got.Resolved)

	// An unknown user leaves the text as a relative path, as Python does.
	got, err = pathfacts.ResolvePath(ws, "~no-such-user-xyz/f")
	require.NoError(t, err)
	require.Equal(t, ws+"/~no-such-user-xyz/f", got.Resolved)
}

func TestResolveCwd(t *testing.T) {
	_, ws, outside := tree(t)
	got, err := pathfacts.ResolveCwd(ws + "/link-out")
	require.NoError(t, err)
	require.Equal(t, outside, got)

	t.Chdir(ws)
	got, err = pathfacts.ResolveCwd("")
	require.NoError(t, err)
	require.Equal(t, ws, got)
	got, err = pathfacts.ResolveCwd("sub")
	require.NoError(t, err)
	require.Equal(t, ws+"/sub", got)

	// A working directory reached through a symlink ($PWD keeps the link):
	// the empty cwd and a relative one both resolve it.
	t.Chdir(ws + "/link-out")
	got, err = pathfacts.ResolveCwd("")
	require.NoError(t, err)
	require.Equal(t, outside, got)
	cwd, facts, err := pathfacts.ResolveCall("", map[string]any{"path": "secret.txt"}, nil, nil)
	require.NoError(t, err)
	require.Equal(t, outside, cwd)
	require.Equal(t, outside+"/secret.txt", facts[0].Resolved)
	got, err = pathfacts.ResolveCwd("../ws")
	require.NoError(t, err)
	require.Equal(t, ws, got, "a relative cwd is joined to the real working directory, then resolved")
}

// BenchmarkResolveCall is one governed call's path facts: the process's
// working directory resolved and one relative path argument that does not
// exist (the API tests' reader call).
func BenchmarkResolveCall(b *testing.B) {
	args, order := map[string]any{"path": "notes.md"}, []string{"path"}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := pathfacts.ResolveCall("", args, order, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func TestResolve_SelectionAndOrder(t *testing.T) {
	_, ws, _ := tree(t)
	args := map[string]any{
		"path":      "notes.txt",
		"file_path": "sub",
		"content":   "not a path",
	}
	facts, err := pathfacts.Resolve(ws, args, []string{"content", "file_path", "path"})
	require.NoError(t, err)
	require.Len(t, facts, 2)
	require.Equal(t, "file_path", facts[0].Arg)
	require.Equal(t, "path", facts[1].Arg)

	// Missing from order: appended in DefaultArgNames order.
	facts, err = pathfacts.Resolve(ws, args, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"path", "file_path"}, []string{facts[0].Arg, facts[1].Arg})

	// Null and empty string are absent; other names are ignored.
	facts, err = pathfacts.Resolve(ws, map[string]any{"path": "", "file_path": nil, "target": "/etc"}, nil)
	require.NoError(t, err)
	require.Empty(t, facts)

	// Extra names through ResolveArgs.
	facts, err = pathfacts.ResolveArgs(ws, map[string]any{"target": "sub"}, nil, []string{"target"})
	require.NoError(t, err)
	require.Equal(t, ws+"/sub", facts[0].Resolved)
}

func TestResolve_NotString(t *testing.T) {
	for _, v := range []any{5.0, true, []any{"a"}, map[string]any{}} {
		_, err := pathfacts.Resolve("/", map[string]any{"path": v}, nil)
		require.ErrorIs(t, err, pathfacts.ErrNotString)
		var ae *pathfacts.ArgError
		require.True(t, errors.As(err, &ae))
		require.Equal(t, "path", ae.Arg)
	}
}

func TestArgError_WrappedStillMatches(t *testing.T) {
	_, err := pathfacts.Resolve("/", map[string]any{"path": 1.0}, nil)
	wrapped := errors.Join(errors.New("host: resolve"), err)
	require.ErrorIs(t, wrapped, pathfacts.ErrNotString)
	var ae *pathfacts.ArgError
	require.ErrorAs(t, wrapped, &ae)
}

func TestResolveCall_ReturnsResolvedCwd(t *testing.T) {
	_, ws, outside := tree(t)
	cwd, facts, err := pathfacts.ResolveCall(ws+"/link-out", map[string]any{"path": "secret.txt"}, []string{"path"}, nil)
	require.NoError(t, err)
	require.Equal(t, outside, cwd)
	require.Len(t, facts, 1)
	require.Equal(t, outside+"/secret.txt", facts[0].Resolved)

	_, _, err = pathfacts.ResolveCall(ws, map[string]any{"path": false}, nil, nil)
	require.ErrorIs(t, err, pathfacts.ErrNotString)
}

// TestResolveArgs_SeveralAndArrays: tools with several path arguments
// (move_file's source and destination) and arrays of paths
// (read_multiple_files' paths) get one fact per path.
func TestResolveArgs_SeveralAndArrays(t *testing.T) {
	_, ws, outside := tree(t)
	args := map[string]any{"destination": outside + "/moved.txt", "source": "notes.txt"}
	facts, err := pathfacts.ResolveArgs(ws, args, []string{"source", "destination"}, []string{"source", "destination"})
	require.NoError(t, err)
	require.Len(t, facts, 2)
	require.Equal(t, "source", facts[0].Arg)
	require.Equal(t, ws+"/notes.txt", facts[0].Resolved)
	require.Equal(t, "destination", facts[1].Arg)
	require.Equal(t, outside+"/moved.txt", facts[1].Resolved)

	args = map[string]any{"paths": []any{"notes.txt", nil, "", outside + "/secret.txt"}}
	facts, err = pathfacts.ResolveArgs(ws, args, []string{"paths"}, []string{"paths[]"})
	require.NoError(t, err)
	require.Len(t, facts, 2, "null and empty elements are no path")
	require.Equal(t, "paths[0]", facts[0].Arg)
	require.Equal(t, "paths[3]", facts[1].Arg)
	require.Equal(t, outside+"/secret.txt", facts[1].Resolved)

	// An array name given a string, a plain name given an array, and an
	// array holding a non-string all fail closed.
	for _, tc := range []struct {
		args  map[string]any
		names []string
		arg   string
	}{
		{map[string]any{"paths": "notes.txt"}, []string{"paths[]"}, "paths"},
		{map[string]any{"paths": []any{"notes.txt"}}, []string{"paths"}, "paths"},
		{map[string]any{"paths": []any{"notes.txt", 3.0}}, []string{"paths[]"}, "paths[1]"},
	} {
		_, err := pathfacts.ResolveArgs(ws, tc.args, nil, tc.names)
		require.ErrorIs(t, err, pathfacts.ErrNotString)
		var ae *pathfacts.ArgError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, tc.arg, ae.Arg)
	}

	// ResolveCall: nil names are the defaults, an empty list is no path.
	_, facts, err = pathfacts.ResolveCall(ws, map[string]any{"path": "notes.txt", "source": "sub"}, nil, nil)
	require.NoError(t, err)
	require.Len(t, facts, 1)
	require.Equal(t, "path", facts[0].Arg)
	_, facts, err = pathfacts.ResolveCall(ws, map[string]any{"path": "notes.txt"}, nil, []string{})
	require.NoError(t, err)
	require.Empty(t, facts)
}
