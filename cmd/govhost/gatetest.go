package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/sdk/gatecases"
)

// newTestCmd is `govhost test`: it runs cases files through one gate module
// and reports pass / fail per case. Exit 0 when every case passed, 1 when
// one failed, 2 on a usage error, an unreadable file or a module the host
// refuses.
func newTestCmd() *cobra.Command {
	var gateRef, config, digest, cacheDir string
	var asJSON bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "test CASES.json|CASES.yaml... --gate NAME|FILE.wasm [--config JSON|@file] [--json] [--sha256 HEX]",
		Short: "Run a gate's test cases files and report pass / fail per case",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			if gateRef == "" {
				return usageErrorf("--gate is required")
			}
			return runTest(cmd.Context(), files, gateRef, config, digest, cacheDir, asJSON, timeout, cmd.OutOrStdout())
		},
	}
	f := c.Flags()
	f.StringVar(&gateRef, "gate", "", "the gate: a .wasm file or a built-in gate's name")
	f.StringVar(&config, "config", "", "configuration of cases that give none (JSON, or @file); default: the file's")
	f.BoolVar(&asJSON, "json", false, "print one JSON report per cases file")
	f.StringVar(&digest, "sha256", "", "expected sha256 of the module (hex); default: trust the file")
	f.DurationVar(&timeout, "timeout", time.Second, "deadline of each guest call")
	f.StringVar(&cacheDir, "cache-dir", defaultCacheDir(), "compilation cache directory (empty: none)")
	return c
}

func runTest(ctx context.Context, files []string, gateRef, config, digest, cacheDir string, asJSON bool, timeout time.Duration, stdout io.Writer) error {
	opts := gatetest.Options{}
	if config != "" {
		raw, err := readJSONArg(config)
		if err != nil {
			return usageErrorf("--config: %v", err)
		}
		opts.Config = raw
	}
	cases := make([]gatecases.File, 0, len(files))
	for _, path := range files {
		f, err := gatecases.LoadFile(path)
		if err != nil {
			return usageError(err)
		}
		cases = append(cases, f)
	}
	wasm, builtinGate, err := gatetest.ReadModule(gateRef)
	if err != nil {
		return usageError(err)
	}
	h, err := host.New(ctx, host.NewConfig().WithCallTimeout(timeout).WithPoolSize(1).WithCompilationCacheDir(cacheDir))
	if err != nil {
		return usageError(err)
	}
	defer h.Close(ctx)
	expected := host.AnyDigest
	if digest != "" {
		expected = digest
	}
	m, err := gatetest.LoadModule(ctx, h, wasm, builtinGate, expected)
	if err != nil {
		return usageErrorf("%s: %v", gateRef, err)
	}
	var status error
	for i, f := range cases {
		rep, err := gatetest.Run(ctx, h, m, f, opts)
		if err != nil {
			return usageError(err)
		}
		rep.File, rep.Module = files[i], gateRef
		if asJSON {
			err = rep.WriteJSON(stdout)
		} else {
			err = rep.WriteText(stdout)
		}
		if err != nil {
			return usageError(err)
		}
		if !rep.OK() {
			status = silentExit(exitInvalid)
		}
	}
	return status
}

// readJSONArg returns a flag's JSON value, given inline or as @file.
func readJSONArg(v string) (json.RawMessage, error) {
	raw := []byte(v)
	if strings.HasPrefix(v, "@") {
		var err error
		if raw, err = os.ReadFile(v[1:]); err != nil {
			return nil, err
		}
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("not valid JSON")
	}
	return raw, nil
}
