package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/govhost/govhost/api"
)

// TokenFileName is the bearer token's file in the data directory.
const TokenFileName = api.TokenFileName

// LoadOrCreateToken returns the bearer token in path, creating the file
// (mode 0600, 32 random bytes as hex) when it does not exist; created says
// so. A token file that others may read (any group or other permission
// bit) or that is shorter than 32 characters is refused.
func LoadOrCreateToken(path string) (token string, created bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return "", false, err
		}
		token = hex.EncodeToString(raw)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", false, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", false, err
		}
		_, werr := f.WriteString(token + "\n")
		if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
			return "", false, err
		}
		return token, true, nil
	}
	if err != nil {
		return "", false, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", false, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", false, fmt.Errorf("server: token file %s has mode %v: others may read it; chmod 600 it", path, st.Mode().Perm())
	}
	token = strings.TrimSpace(string(b))
	if len(token) < 32 {
		return "", false, fmt.Errorf("server: token file %s holds fewer than 32 characters", path)
	}
	return token, false, nil
}
