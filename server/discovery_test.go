package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/server"
	"github.com/govhost/govhost/server/client"
)

// TestDiscover_RecordedLiveStaleAndMalformed: a record of a server that
// answers is found; no record, a record nobody answers at and a record
// that is not one are ErrNoServer (the caller opens the directory); the
// record is removed on shutdown only while it is still this process's.
func TestDiscover_RecordedLiveStaleAndMalformed(t *testing.T) {
	e := sharedEnv(t)
	ctx := context.Background()
	dir := t.TempDir()
	_, err := client.Discover(ctx, dir)
	require.ErrorIs(t, err, client.ErrNoServer)

	remove, err := server.PublishAddress(dir, e.http.URL)
	require.NoError(t, err)
	url, err := client.Discover(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, e.http.URL, url)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left behind")
	remove()
	require.NoFileExists(t, filepath.Join(dir, api.ServeFileName))

	path := filepath.Join(dir, api.ServeFileName)
	require.NoError(t, os.WriteFile(path, []byte(`{"url":"http://127.0.0.1:9","pid":1}`), 0o644))
	_, err = client.Discover(ctx, dir)
	require.ErrorIs(t, err, client.ErrNoServer, "stale: nothing answers there")
	require.NoError(t, os.WriteFile(path, []byte(`not json`), 0o644))
	_, err = client.Discover(ctx, dir)
	require.ErrorIs(t, err, client.ErrNoServer)

	// Another server took the directory over: its record is not ours.
	remove, err = server.PublishAddress(dir, e.http.URL)
	require.NoError(t, err)
	other, _ := json.Marshal(api.ServeRecord{URL: "http://127.0.0.1:1", PID: os.Getpid() + 1})
	require.NoError(t, os.WriteFile(path, other, 0o644))
	remove()
	require.FileExists(t, path)
}
