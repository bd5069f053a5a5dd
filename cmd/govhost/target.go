package main

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/hookclient"
	"github.com/govhost/govhost/server/client"
)

// target is the data directory a command works on and how it reaches it:
// through the `govhost serve` that holds it (the address serve records in
// the directory, or --addr), or, when no server runs, by opening the
// directory itself. A command never opens a directory a server holds.
type target struct {
	data, addr, tokenFile *string
}

// targetFlags adds --data, --addr and --token-file.
func targetFlags(c *cobra.Command) target {
	return target{
		data:      dataFlag(c),
		addr:      c.Flags().String("addr", "", "go through the govhost serve at this URL (default: the server running on --data, if any)"),
		tokenFile: c.Flags().String("token-file", "", "bearer token for --addr (default DATA/operator-token or DATA/token, then $"+hookclient.EnvToken+")"),
	}
}

// client returns a client of the server that holds the data directory (or
// of --addr), or nil when none runs: the command then opens the directory.
func (t target) client(ctx context.Context) (*client.Client, error) {
	url := *t.addr
	if url == "" {
		found, err := client.Discover(ctx, *t.data)
		if errors.Is(err, client.ErrNoServer) {
			return nil, nil
		}
		if err != nil {
			return nil, usageError(err)
		}
		url = found
	}
	var token client.Option
	switch env := os.Getenv(hookclient.EnvToken); {
	case *t.tokenFile != "":
		token = client.TokenFromFile(*t.tokenFile)
	case env != "" && !hasToken(*t.data):
		token = client.Token(env)
	default:
		token = client.TokenFromDataDir(*t.data)
	}
	c, err := client.New(url, token)
	if err != nil {
		return nil, usageError(err)
	}
	return c, nil
}

// hasToken reports whether a data directory holds a token file this user
// may read.
func hasToken(dir string) bool {
	var probe client.Client
	return client.TokenFromDataDir(dir)(&probe) == nil
}
