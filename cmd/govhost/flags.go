package main

import (
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
