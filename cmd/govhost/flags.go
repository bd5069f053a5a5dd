package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost"
)

// dataEnv names the data directory when --data is not given.
const dataEnv = "GOVHOST_DATA"

// A data directory (--data, default $GOVHOST_DATA or ./govhost-data) is
// laid out by package govhost: db/ (the Pebble database of the evidence
// and policy stores), modules/<sha256>.wasm (every user module a stored
// policy references, named by its digest) and wasm-cache/.
const defaultDataDir = "./" + govhost.DefaultDir

// dataFlag adds --data, the one name of the data directory on every
// command that opens one.
func dataFlag(c *cobra.Command) *string {
	def := defaultDataDir
	if env := os.Getenv(dataEnv); env != "" {
		def = env
	}
	return c.Flags().String("data", def, "data directory (default from $"+dataEnv+" when set)")
}

// progress is where a long-running command reports progress: stderr when
// it is a terminal, nowhere when piped or redirected.
func progress(c *cobra.Command) io.Writer {
	w := c.ErrOrStderr()
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return w
		}
	}
	return io.Discard
}

// quietLogger keeps Pebble's informational messages (WAL replay on every
// open) off a command line; warnings and errors still reach stderr.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// storeEnv names the store when --store is not given.
const storeEnv = "GOVHOST_STORE"

// storeKey carries the root's --store to the commands through their
// context (one root command per run, no global state).
type storeKey struct{}

// storeFlag adds the root's persistent --store: where every command that
// opens a data directory keeps evidence and policies. "pebble" (default)
// is the Pebble database in the data directory; "postgres" is PostgreSQL
// through $GOVHOST_DATABASE_URL, or the PG* variables when it is unset; a
// postgres:// URL names the database itself (prefer the environment: a
// command line is visible to other users of the machine). The connection
// string is never printed.
func storeFlag(root *cobra.Command) {
	def := "pebble"
	if env := os.Getenv(storeEnv); env != "" {
		def = env
	}
	root.PersistentFlags().String("store", def, `evidence and policy store: pebble, postgres ($`+govhost.DatabaseURLEnv+` or PG*), or a postgres:// URL (default from $`+storeEnv+` when set)`)
	// NB: the default is shown in --help; never show a URL there.
	if f := root.PersistentFlags().Lookup("store"); f != nil && def != "pebble" && def != "postgres" {
		f.DefValue = "$" + storeEnv
	}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		store, _ := cmd.Flags().GetString("store")
		if _, _, err := govhost.PostgresDSN(store); err != nil {
			return usageError(err)
		}
		cmd.SetContext(context.WithValue(cmd.Context(), storeKey{}, store))
		return nil
	}
}

// engineOptions is how every command opens a data directory: its --store,
// a quiet logger and the shared compilation cache.
func engineOptions(ctx context.Context, dir string) govhost.Options {
	store, _ := ctx.Value(storeKey{}).(string)
	return govhost.Options{Dir: dir, Store: store, Logger: quietLogger(), Host: dataHostConfig(dir)}
}
