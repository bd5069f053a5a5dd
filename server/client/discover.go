package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/govhost/govhost/api"
)

// ErrNoServer: no running server holds the data directory (no
// api.ServeFileName in it, or the server it names does not answer: a
// stale record of a server that did not shut down cleanly).
var ErrNoServer = errors.New("govhost: no running server on this data directory")

// Discover returns the base URL of the `govhost serve` that holds the data
// directory dir, from the address it records there (api.ServeFileName),
// after checking that a govhost answers /healthz at it. Without a record,
// or when nothing answers, it returns ErrNoServer: the caller may open the
// directory itself.
func Discover(ctx context.Context, dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, api.ServeFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoServer
	}
	if err != nil {
		return "", err
	}
	var rec api.ServeRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.URL == "" {
		return "", fmt.Errorf("%w (%s is not a server record: ignored)", ErrNoServer, filepath.Join(dir, api.ServeFileName))
	}
	c, err := New(rec.URL, HTTPClient(&http.Client{Timeout: probeTimeout}))
	if err != nil {
		return "", fmt.Errorf("%w (%s: %v)", ErrNoServer, filepath.Join(dir, api.ServeFileName), err)
	}
	var h api.Health
	if err := c.do(ctx, "GET", "/healthz", nil, &h); err != nil || h.Status != "ok" {
		return "", ErrNoServer
	}
	return rec.URL, nil
}

// TokenFromDataDir reads the bearer token of a data directory: the
// operator's (api.OperatorTokenFileName) when this user may read it, which
// every route accepts, else the agents' (api.TokenFileName).
func TokenFromDataDir(dir string) Option {
	return func(c *Client) error {
		for _, name := range []string{api.OperatorTokenFileName, api.TokenFileName} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				continue
			}
			if err != nil {
				return fmt.Errorf("govhost: token file: %w", err)
			}
			c.token = strings.TrimSpace(string(b))
			return nil
		}
		return fmt.Errorf("govhost: no readable token file (%s or %s) in %s", api.OperatorTokenFileName, api.TokenFileName, dir)
	}
}
