package server

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/govhost/govhost/api"
)

// PublishAddress records in the data directory dir where this server
// listens (api.ServeFileName: the URL and this process's id, never a
// token), so that the other commands on dir talk to it instead of opening
// the directory the server holds. The file is written atomically (a
// temporary file renamed over it); remove deletes it when it is still
// ours (a clean shutdown).
func PublishAddress(dir, url string) (remove func(), err error) {
	body, err := json.Marshal(api.ServeRecord{URL: url, PID: os.Getpid()})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, api.ServeFileName)
	tmp, err := os.CreateTemp(dir, api.ServeFileName+".*")
	if err != nil {
		return nil, err
	}
	_, werr := tmp.Write(append(body, '\n'))
	if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Sync(), tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return nil, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return nil, err
	}
	return func() {
		// NB: another serve may have taken the directory over since (after
		// this one lost it); its record is not ours to delete.
		var rec api.ServeRecord
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &rec) == nil && rec.PID == os.Getpid() && rec.URL == url {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return
			}
		}
	}, nil
}
