package pebblestore

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
)

func init() {
	// lock: hold the store in $DIR open until stdin closes.
	children["lock"] = func() error {
		s, err := Open(os.Getenv("DIR"), Options{BallastSize: -1})
		if err != nil {
			return err
		}
		defer s.Close()
		os.Stdout.WriteString("ready\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		return nil
	}
}

func TestOpen_LockedByAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := childCommand("lock", "DIR="+dir)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)

	_, err = Open(dir, Options{BallastSize: -1})
	require.ErrorIs(t, err, ErrLocked)
	require.Contains(t, err.Error(), dir)

	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err, "the lock is released with its holder")
	require.NoError(t, s.Close())
}

func TestOpen_LockedInThisProcess(t *testing.T) {
	s, dir := openTest(t, Options{})
	_, err := Open(dir, Options{})
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, s.Close())
	s2, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	require.NoError(t, s2.Close())
}

func TestOpen_ForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600))
	_, err := Open(dir, Options{})
	require.ErrorIs(t, err, ErrForeignDirectory)
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, n := range names {
		require.Contains(t, []string{"notes.txt", "LOCK"}, n.Name(), "nothing of ours left behind")
	}
}

func TestOpen_CorruptDirectory(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string){
		"garbage manifest": func(t *testing.T, dir string) {
			overwrite(t, dir, "MANIFEST-", []byte("this is not a manifest, it is a poem"))
		},
		"truncated manifest": func(t *testing.T, dir string) {
			overwrite(t, dir, "MANIFEST-", nil)
		},
		"missing manifest": func(t *testing.T, dir string) {
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "MANIFEST-") {
					require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
				}
			}
		},
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{BallastSize: -1})
			require.NoError(t, err)
			storetest.Fill(t, s, 3)
			require.NoError(t, s.Close())
			corrupt(t, dir)
			s, err = Open(dir, Options{BallastSize: -1})
			require.Error(t, err)
			require.Nil(t, s)
			require.ErrorIs(t, err, ErrCorrupt)
			require.Contains(t, err.Error(), dir)
			// The lock is released on failure: fixing the directory works.
			_, err = Open(dir, Options{BallastSize: -1})
			require.NotErrorIs(t, err, ErrLocked)
		})
	}
}

func overwrite(t *testing.T, dir, prefix string, data []byte) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o600))
			n++
		}
	}
	require.NotZero(t, n, "no %s file in %s", prefix, dir)
}

func TestNew_SharesDBWithOtherKeyspaces(t *testing.T) {
	ctx := context.Background()
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer db.Close()
	// The policy store's keys beside ours.
	require.NoError(t, db.Set([]byte("p/policy/1"), []byte("x"), pebble.Sync))
	require.NoError(t, db.Set([]byte("z"), []byte("after e/"), pebble.Sync))
	s, err := New(db, Options{})
	require.NoError(t, err)
	chain, recs := storetest.Fill(t, s, 3)
	res, err := s.Verify(ctx, chain, recs[2].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid)
	require.NoError(t, s.Close())
	v, closer, err := db.Get([]byte("p/policy/1"))
	require.NoError(t, err, "Close of a shared store leaves the DB open")
	require.Equal(t, "x", string(v))
	require.NoError(t, closer.Close())

	s2, err := New(db, Options{})
	require.NoError(t, err)
	defer s2.Close()
	got, err := s2.Read(ctx, chain, -1)
	require.NoError(t, err)
	require.Equal(t, recs, got)
}

func TestStore_DB_SharedWithAnotherKeyspace(t *testing.T) {
	ctx := context.Background()
	s, dir := openTest(t, Options{})
	chain, recs := storetest.Fill(t, s, 2)
	require.NoError(t, s.DB().Set([]byte("p/policy/1"), []byte("v1"), pebble.Sync))
	require.NoError(t, s.Close())

	s, err := Open(dir, Options{BallastSize: -1})
	require.NoError(t, err)
	defer s.Close()
	v, closer, err := s.DB().Get([]byte("p/policy/1"))
	require.NoError(t, err)
	require.Equal(t, "v1", string(v))
	require.NoError(t, closer.Close())
	res, err := s.Verify(ctx, chain, recs[1].ChainHash)
	require.NoError(t, err)
	require.True(t, res.Valid, "the other keyspace does not disturb the chains")
}

func TestNew_RefusesUnknownFormat(t *testing.T) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Set(formatKey, []byte("govhost-evidence-pebble/99"), pebble.Sync))
	_, err = New(db, Options{})
	require.ErrorIs(t, err, ErrUnsupportedFormat)
}

func TestNew_RefusesUnmarkedEvidenceKeys(t *testing.T) {
	db, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Set(recordKey(uuid.New(), 0), []byte("?"), pebble.Sync))
	_, err = New(db, Options{})
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestOptions_Validate(t *testing.T) {
	o := (&Options{}).EnsureDefaults()
	require.NoError(t, o.Validate())
	require.Equal(t, int64(DefaultBallastSize), o.BallastSize)
	o.MemTableSize = 10
	require.Error(t, o.Validate())
	o = (&Options{CacheSize: 8 << 20, MemTableSize: 4 << 20}).EnsureDefaults()
	require.Error(t, o.Validate(), "no room left for blocks")
	_, err := Open(t.TempDir(), Options{MemTableSize: 10})
	require.Error(t, err)
}
