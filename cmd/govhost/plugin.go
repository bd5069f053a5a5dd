package main

import (
	"encoding/json"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/host"
)

// newPluginCheckCmd is `govhost plugin check FILE.wasm`: it loads the
// module, reports its ABI kind and version, exports and sha256, evaluates
// the built-in smoke inputs, and exits 0 for a valid gate, 1 for an invalid
// one, 2 on a usage error or an unreadable file.
func newPluginCheckCmd() *cobra.Command {
	var digest, config, cacheDir string
	var asJSON bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "check [--sha256 HEX] [--config JSON] [--json] FILE.wasm",
		Short: "Load a gate module, report its ABI, exports and digest, run smoke inputs",
		Args:  exactArgs("FILE.wasm"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			wasm, err := os.ReadFile(path)
			if err != nil {
				return usageError(err)
			}
			if config != "" && !json.Valid([]byte(config)) {
				return usageErrorf("--config is not valid JSON")
			}
			expected := host.AnyDigest
			if digest != "" {
				expected = digest
			}
			cfg := host.NewConfig().WithCallTimeout(timeout).WithPoolSize(1).WithCompilationCacheDir(cacheDir)
			rep := gatetest.Check(cmd.Context(), cfg, path, wasm, expected, []byte(config))
			write := rep.WriteText
			if asJSON {
				write = rep.WriteJSON
			}
			if err := write(cmd.OutOrStdout()); err != nil {
				return err
			}
			if !rep.Valid {
				return silentExit(exitInvalid)
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&digest, "sha256", "", "expected sha256 of the module (hex); default: trust the file")
	f.StringVar(&config, "config", "", "configuration JSON passed to gate_configure")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.DurationVar(&timeout, "timeout", time.Second, "deadline of each guest call")
	f.StringVar(&cacheDir, "cache-dir", defaultCacheDir(), "compilation cache directory (empty: none)")
	return c
}
