package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/govhost/govhost/gatetest"
	"github.com/govhost/govhost/host"
)

const testUsage = "usage: govhost test CASES.json|CASES.yaml... --gate NAME|FILE.wasm [--config JSON|@file] [--json] [--sha256 HEX]"

// runTest implements `govhost test`: it runs cases files through one gate
// module and reports pass / fail per case. Exit 0 when every case passed, 1
// when one failed, 2 on a usage error, an unreadable file or a module the
// host refuses.
func runTest(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	gateRef := fs.String("gate", "", "the gate: a .wasm file or a built-in gate's name")
	config := fs.String("config", "", "configuration of cases that give none (JSON, or @file); default: the file's")
	asJSON := fs.Bool("json", false, "print one JSON report per cases file")
	digest := fs.String("sha256", "", "expected sha256 of the module (hex); default: trust the file")
	timeout := fs.Duration("timeout", time.Second, "deadline of each guest call")
	cacheDir := fs.String("cache-dir", defaultCacheDir(), "compilation cache directory (empty: none)")
	files, err := parseInterleaved(fs, args)
	if err != nil || *gateRef == "" || len(files) == 0 {
		fmt.Fprintln(stderr, testUsage)
		return exitUsage
	}
	opts := gatetest.Options{}
	if *config != "" {
		raw, err := readJSONArg(*config)
		if err != nil {
			fmt.Fprintln(stderr, "govhost test: --config:", err)
			return exitUsage
		}
		opts.Config = raw
	}
	cases := make([]gatetest.File, 0, len(files))
	for _, path := range files {
		f, err := gatetest.LoadFile(path)
		if err != nil {
			fmt.Fprintln(stderr, "govhost test:", err)
			return exitUsage
		}
		cases = append(cases, f)
	}
	wasm, err := gatetest.ReadModule(*gateRef)
	if err != nil {
		fmt.Fprintln(stderr, "govhost test:", err)
		return exitUsage
	}
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithCallTimeout(*timeout).WithPoolSize(1).WithCompilationCacheDir(*cacheDir))
	if err != nil {
		fmt.Fprintln(stderr, "govhost test:", err)
		return exitUsage
	}
	defer h.Close(ctx)
	expected := host.AnyDigest
	if *digest != "" {
		expected = *digest
	}
	m, err := h.Load(ctx, wasm, expected)
	if err != nil {
		fmt.Fprintf(stderr, "govhost test: %s: %v\n", *gateRef, err)
		return exitUsage
	}
	status := exitOK
	for i, f := range cases {
		rep, err := gatetest.Run(ctx, h, m, f, opts)
		if err != nil {
			fmt.Fprintln(stderr, "govhost test:", err)
			return exitUsage
		}
		rep.File, rep.Module = files[i], *gateRef
		if *asJSON {
			err = rep.WriteJSON(stdout)
		} else {
			err = rep.WriteText(stdout)
		}
		if err != nil {
			fmt.Fprintln(stderr, "govhost test:", err)
			return exitUsage
		}
		if !rep.OK() {
			status = exitInvalid
		}
	}
	return status
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments (the flag package stops at the first positional one)
// and returns the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
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
