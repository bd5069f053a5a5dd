package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// runChain implements `govhost chain verify --file F --expected-head H`:
// it prints the VerificationResult as JSON and exits 0 when valid, 1 when
// invalid, 2 on a usage or input error.
func runChain(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		fmt.Fprintln(stderr, "usage: govhost chain verify --file records.jsonl --expected-head H")
		return exitUsage
	}
	fs := flag.NewFlagSet("chain verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", "chain exported as JSON Lines, one record a line in stored order (- for stdin)")
	head := fs.String("expected-head", "", "trusted chain hash the chain must end at (64 lowercase hex)")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "govhost chain verify: --file is required")
		return exitUsage
	}
	if !governance.IsDigest(*head) {
		fmt.Fprintln(stderr, "govhost chain verify: --expected-head must be 64 lowercase hex characters")
		return exitUsage
	}
	in := io.Reader(os.Stdin)
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			fmt.Fprintln(stderr, "govhost chain verify:", err)
			return exitUsage
		}
		defer f.Close()
		in = f
	}
	res, err := evidence.VerifyJSONL(in, *head)
	if err != nil {
		fmt.Fprintln(stderr, "govhost chain verify:", err)
		return exitUsage
	}
	out, _ := json.Marshal(res)
	fmt.Fprintln(stdout, string(out))
	if !res.Valid {
		return exitInvalid
	}
	return exitOK
}
