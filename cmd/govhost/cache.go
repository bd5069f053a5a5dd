package main

import (
	"os"
	"path/filepath"

	"github.com/govhost/govhost/host"
)

// cacheEnv names a compilation cache directory every command uses instead
// of its default (a shared cache for CI, or a read-only data directory).
const cacheEnv = "GOVHOST_WASM_CACHE"

// defaultCacheDir is where the commands without a data directory (eval,
// plugin check) keep compiled modules between runs: $GOVHOST_WASM_CACHE,
// else the user's cache directory, else none.
func defaultCacheDir() string {
	if dir := os.Getenv(cacheEnv); dir != "" {
		return dir
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "govhost", "wazero")
}

// dataHostConfig is the host configuration of the commands that open a data
// directory: its wasm-cache/, unless $GOVHOST_WASM_CACHE names another.
func dataHostConfig(dataDir string) *host.Config {
	dir := os.Getenv(cacheEnv)
	if dir == "" {
		dir = filepath.Join(dataDir, "wasm-cache")
	}
	cfg := host.NewConfig().WithCompilationCacheDir(dir)
	return &cfg
}
