package hookclient

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/govhost/govhost/agents"
)

// Environment variables the command hook reads when a flag is not given.
const (
	EnvURL       = "GOVHOST_URL"
	EnvToken     = "GOVHOST_TOKEN"
	EnvTokenFile = "GOVHOST_TOKEN_FILE"
)

// Flags are the command hook's flags as given (empty = not given).
type Flags struct {
	Agent     string
	Event     string
	URL       string
	TokenFile string
	Timeout   time.Duration
}

// Main resolves flags against the environment ($GOVHOST_URL, then
// DefaultURL; --token-file, $GOVHOST_TOKEN_FILE, then $GOVHOST_TOKEN) and
// runs one hook. A token file that cannot be read blocks like any other
// failure.
func Main(ctx context.Context, f Flags, stdin io.Reader, stdout, stderr io.Writer) int {
	opt := Options{Agent: agents.Agent(f.Agent), Event: f.Event, URL: f.URL, Timeout: f.Timeout}
	if opt.URL == "" {
		opt.URL = os.Getenv(EnvURL)
	}
	tokenFile := f.TokenFile
	if tokenFile == "" {
		tokenFile = os.Getenv(EnvTokenFile)
	}
	if tokenFile != "" {
		raw, err := os.ReadFile(tokenFile)
		if err != nil {
			return Run(ctx, opt, failingReader{fmt.Errorf("the sidecar token file: %v", err)}, stdout, stderr)
		}
		opt.Token = strings.TrimSpace(string(raw))
	} else {
		opt.Token = os.Getenv(EnvToken)
	}
	return Run(ctx, opt, stdin, stdout, stderr)
}

// failingReader makes Run block with err as the cause.
type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }
